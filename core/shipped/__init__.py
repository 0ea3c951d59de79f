"""Files Elora ships beside its code, read through `importlib.resources`.

In the repository they stay where a reader looks for them: `prompts/*.j2`, and the example home
`data/` (`data/skills/*/SKILL.md`, `data/identity.md`). `setup.py` maps those two folders into
this package as `core.shipped.prompts` and `core.shipped.examples`, so an editable install reads
the checkout itself and a wheel carries copies. `identity.md` next to this file is the starter a
new ELORA_HOME gets (the example in `data/` describes an invented person).
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from core.errors import ConfigError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

PROMPTS = "core.shipped.prompts"
EXAMPLES = "core.shipped.examples"


def _package(name: str) -> Traversable:
    try:
        return files(name)
    except ModuleNotFoundError:
        # An editable install made before the mapping existed does not know these packages.
        raise ConfigError(
            f"Elora's shipped files ({name}) are not installed: reinstall Elora "
            "(in a checkout: pip install -e .)"
        ) from None


def prompt_files() -> Traversable:
    """The folder of prompt templates (`*.j2`)."""
    return _package(PROMPTS)


def shipped_skills() -> dict[str, Traversable]:
    """The example skills by folder name, each mapped to its SKILL.md."""
    folder = _package(EXAMPLES).joinpath("skills")
    found = {}
    for skill in folder.iterdir() if folder.is_dir() else ():
        profile = skill.joinpath("SKILL.md")
        if profile.is_file():
            found[skill.name] = profile
    return dict(sorted(found.items()))


def identity_example() -> Traversable:
    """The identity of the demo home (an invented operator who matches data/examples)."""
    return _package(EXAMPLES).joinpath("identity.md")


def identity_starter() -> Traversable:
    """The identity a new home starts with: headings to fill in, no invented facts."""
    return files(__name__).joinpath("identity.md")
