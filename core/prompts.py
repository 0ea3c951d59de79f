"""One Jinja2 environment for every prompt file in prompts/*.j2 (StrictUndefined).

The templates are read as package data (`core.shipped.prompts`, see core/shipped), so a wheel
finds them as well as a checkout.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from core.shipped import PROMPTS, prompt_files


@lru_cache(maxsize=1)
def environment():
    """The shared environment: missing variables are errors, not empty strings."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    prompt_files()  # a clear error if the templates are not installed
    env = Environment(
        loader=PackageLoader(PROMPTS, "."),
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["quote"] = quote_block
    return env


def quote_block(text: str) -> str:
    """Render untrusted text as a quoted block so it reads as data, not as instructions."""
    body = str(text).replace("\r", "")
    return "\n".join("> " + line for line in body.split("\n"))


def render(template: str, /, **variables: Any) -> str:
    """Render prompts/<template>.j2 with the given variables."""
    return environment().get_template(f"{template}.j2").render(**variables).strip()


def template_names() -> list[str]:
    """Every prompt template shipped in prompts/."""
    return sorted(
        f.name.removesuffix(".j2") for f in prompt_files().iterdir() if f.name.endswith(".j2")
    )
