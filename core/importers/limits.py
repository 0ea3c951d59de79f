"""What an export must respect before any of it is written: how deep it nests, how long each
message is.

Both are checked while the import is prepared, so a refused export leaves nothing behind. The
length rule is the archive's own (`records.length_problem`): an imported message obeys the
limit a live one does.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from core.archive.records import CaptureIn, length_problem
from core.errors import ImportFormatError

# Real exports nest about 8 levels (account, chats, list, chat, messages, message, text
# entities); anything far deeper is not a chat export, and Python's recursive JSON tools
# (decoding, encoding media for storage) would fail on it with a RecursionError.
MAX_NESTING = 64
SHOWN_STEPS = 6  # of the path to a too-deep value, in the error message
# A string literal (with its escapes) or one bracket: enough to follow nesting in raw JSON.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def too_deep_in_text(text: str, name: str) -> ImportFormatError:
    """The error for raw JSON nested past MAX_NESTING, naming the line and column."""
    depth = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, token.start()) + 1
                column = token.start() - (text.rfind("\n", 0, token.start()) + 1) + 1
                return _nesting(name, f"line {line}, column {column}")
        elif mark in ("]", "}"):
            depth -= 1
    return _nesting(name, "")


def check_nesting(data: Any, name: str) -> None:
    """Raise ImportFormatError when the decoded export nests deeper than MAX_NESTING."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise _nesting(name, _path_to_depth(data, MAX_NESTING + 1))
        children = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in children if isinstance(v, dict | list))


def _path_to_depth(data: Any, depth: int) -> str:
    """Where the first value at `depth` sits (`messages[0][0]…`), for the error message."""
    stack: list[tuple[Any, list[str]]] = [(data, [])]
    while stack:
        value, steps = stack.pop()
        if len(steps) + 1 >= depth:
            shown = "".join(steps[:SHOWN_STEPS]).lstrip(".")
            return shown + ("…" if len(steps) > SHOWN_STEPS else "")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            if isinstance(child, dict | list):
                step = f"[{key}]" if isinstance(value, list) else f".{key}"
                stack.append((child, [*steps, step]))
    return "top level"


def _nesting(name: str, where: str) -> ImportFormatError:
    at = f" at {where}" if where else ""
    return ImportFormatError(
        f"{name}: nested too deeply{at} (more than {MAX_NESTING} levels); "
        "not a chat export, nothing was imported"
    )


def check_lengths(parser: ModuleType, data: Any, name: str, skip: bool = False) -> list[str]:
    """Every message's length against the archive's limit, before anything is written.

    Raises ImportFormatError for the first message over the limit; with `skip`, returns a
    description of each instead (the import then leaves them out and reports them).
    """
    over: list[str] = []
    for item in parser.parse(data, name):
        if not isinstance(item, CaptureIn):
            continue
        problem = length_problem(item.text)
        if problem is None:
            continue
        where = describe(item)
        if not skip:
            raise ImportFormatError(
                f"{name}: {where} is {problem}; nothing was imported (shorten or remove it, "
                "or run again with --skip-too-long to import the rest without it)"
            )
        over.append(f"{name}: {where} ({problem})")
    return over


def describe(item: CaptureIn) -> str:
    """`message 123 in chat "Léa"`: how a user finds a message again in the export."""
    chat = item.provenance.get("chat_name") or item.chat_id
    return f'message {item.message_id} in chat "{chat}"'
