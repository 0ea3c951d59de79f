"""Offline token counting for budgets: no tokenizer download, conservative for FR and EN.

Calibrated against the XLM-R sentencepiece tokenizer bundled with the local embedder on French
and English prose: words average ~1.2 tokens, punctuation and digits count on their own. The
estimate errs high, so a pack that fits here fits the models' real tokenizers.
"""

from __future__ import annotations

import functools
import math
import re

_PIECES = re.compile(r"[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)


# Every pack weighs the same identity, essentials and frequent entries again: their counts are
# kept (a pure function of the text); the prefixes tried by truncate_to_tokens are not.
@functools.lru_cache(maxsize=4096)
def count_tokens(text: str) -> int:
    """Estimated tokens of a text (at least 1 for non-empty text)."""
    return _estimate(text)


def _estimate(text: str) -> int:
    if not text:
        return 0
    total = 0.0
    for piece in _PIECES.findall(text):
        if piece.isdigit():
            total += math.ceil(len(piece) / 3)
        elif piece.isalpha():
            total += 1.0 + max(0, len(piece) - 6) / 4
        else:
            total += 1.0
    return max(1, math.ceil(total * 1.3))


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` (cut at a word) whose estimate fits the budget."""
    if count_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _estimate(text[:mid] + "…") <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    space = cut.rfind(" ")
    if space > lo // 2:
        cut = cut[:space]
    return cut.rstrip() + "…" if cut else ""
