"""One Jinja2 environment for every prompt file in prompts/*.j2 (StrictUndefined), and the one
helper through which every string from outside reaches a prompt as quoted data.

Data, never instructions (README, Data layout: a recalled or imported string is never an
instruction to the model): a sender name, a chat title, a file name, a document, a
memory, a model's or an expert's output is printed with `| data` (inline: one JSON string
literal, so no line break, heading or closing bracket in it can escape) or `| quote` (a block:
every line, whatever character ended it, starts with "> ", and there is no closer to forge).

The templates are read as package data (`core.shipped.prompts`, see core/shipped), so a wheel
finds them as well as a checkout.
"""

from __future__ import annotations

import json
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
    env.filters["data"] = as_data
    env.filters["quote"] = quote_block
    return env


# Characters a model may read as a line break that JSON leaves unescaped.
_JSON_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def as_data(value: Any, block: bool = False) -> str:
    """Render a string from outside as quoted data: one JSON string literal, or (`block`) a
    quoted block whose every line starts with "> "."""
    text = "" if value is None else str(value)
    if block:
        # splitlines() knows every line break (\r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029...)
        return "\n".join("> " + line for line in (text.splitlines() or [""]))
    return json.dumps(text, ensure_ascii=False).translate(_JSON_LINE_BREAKS)


def quote_block(text: Any) -> str:
    """The block form of `as_data` (the `| quote` filter)."""
    return as_data(text, block=True)


def render(template: str, /, **variables: Any) -> str:
    """Render prompts/<template>.j2 with the given variables."""
    return environment().get_template(f"{template}.j2").render(**variables).strip()


def template_names() -> list[str]:
    """Every prompt template shipped in prompts/."""
    return sorted(
        f.name.removesuffix(".j2") for f in prompt_files().iterdir() if f.name.endswith(".j2")
    )
