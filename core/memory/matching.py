"""The phrase a forget looks for: matched case- and accent-insensitively, in plain text and
deep inside stored JSON (whose strings may be ASCII-escaped on disk)."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from core.errors import InvalidInput

# Shortest phrase accepted: a few letters would match (and erase) half of the archive.
MIN_PHRASE_CHARS = 6
FORGOTTEN = "[forgotten]"
# Typographic variants that a keyboard and a phone write differently.
_VARIANTS = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "“": '"', "”": '"', "«": '"',
                           "»": '"', "–": "-", "—": "-", "‑": "-"})  # fmt: skip
# Accents as NFKD decomposes them: the blocks of combining diacritical marks. (Other scripts'
# combining signs, such as Indic vowel signs, are letters of their words and are kept.)
_ACCENTS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold_for_match(text: str) -> str:
    """Text as a forget compares it: no accents, no case, one kind of apostrophe, single spaces."""
    # String and regex operations in C only: a forget reads the whole archive.
    if not text.isascii():
        text = _ACCENTS.sub("", unicodedata.normalize("NFKD", text))
        if not text.isascii():  # typographic quotes and dashes, other letters
            text = text.translate(_VARIANTS)
    return " ".join(text.casefold().split())


class Phrase:
    """A phrase to forget; `in_text` and `in_json` say whether a stored value holds it."""

    def __init__(self, text: str):
        self.text = text or ""
        self.folded = fold_for_match(self.text)
        if len(self.folded.replace(" ", "")) < MIN_PHRASE_CHARS:
            raise InvalidInput(
                f"the phrase to forget needs at least {MIN_PHRASE_CHARS} letters or digits, "
                "so that it cannot match (and erase) most of the archive"
            )

    def in_text(self, value: str | None) -> bool:
        """Whether a text contains the phrase."""
        return bool(value) and self.folded in fold_for_match(value)

    def in_stored(self, raw: Any) -> bool:
        """Whether a JSON column, as stored (text), holds the phrase in one of its strings."""
        if raw is None or raw in ("", "{}", "[]", "null"):
            return False
        if not isinstance(raw, str):
            return self.in_json(raw)
        if "\\" not in raw and self.folded not in fold_for_match(raw):
            return False  # nothing escaped: the raw text already tells (the usual case)
        try:
            return self.in_json(json.loads(raw))
        except ValueError:
            return self.in_text(raw)

    def in_json(self, value: Any) -> bool:
        """Whether any string (or key) inside a JSON value contains the phrase."""
        if isinstance(value, str):
            return self.in_text(value)
        if isinstance(value, dict):
            return any(self.in_text(str(k)) or self.in_json(v) for k, v in value.items())
        if isinstance(value, list | tuple):
            return any(self.in_json(v) for v in value)
        return False

    def scrub(self, value: Any) -> Any:
        """A JSON value with every string holding the phrase replaced by FORGOTTEN."""
        if isinstance(value, str):
            return FORGOTTEN if self.in_text(value) else value
        if isinstance(value, dict):
            return {
                (FORGOTTEN if self.in_text(str(k)) else k): self.scrub(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.scrub(v) for v in value]
        return value


def replace_strings(value: Any, old: str, new: str) -> Any:
    """A JSON value with `old` replaced inside every string (used for forgotten memory ids)."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: replace_strings(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replace_strings(v, old, new) for v in value]
    return value
