"""A new ELORA_HOME's first file: identity.md from the shipped starter.

The example skills are copied later, the first time skills are listed (core/council/skills.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.shipped import identity_starter

if TYPE_CHECKING:
    from core.config import Settings

log = logging.getLogger(__name__)


def prepare_home(settings: Settings) -> bool:
    """Give a new home (missing or empty folder) its identity.md; True if one was written.

    Only a new home gets one, so an operator who deletes the file is not overruled; nothing is
    written when ELORA_IDENTITY_FILE names another file."""
    if settings.identity_file is not None:
        return False
    home = settings.home
    try:
        if home.exists() and any(home.iterdir()):
            return False
        home.mkdir(parents=True, exist_ok=True)
        (home / "identity.md").write_bytes(identity_starter().read_bytes())
    except OSError as exc:
        # Not fatal: the evidence pack and `elora doctor` report a missing identity file.
        log.warning("could not create %s: %s", home / "identity.md", exc)
        return False
    return True
