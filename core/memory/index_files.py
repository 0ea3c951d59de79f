"""Pieces of erased text left in the vector index's binary files, overwritten after a forget.

Chroma stores no text, but its embedded index persists whole buffers, the capacity it has not
used yet included: those bytes are whatever the process freed there before, often a message
it just read. The index never reads that capacity, and no vector, link or label it does read
forms a run of text, so a run of an erased text found there is such a leftover: it is zeroed
in place (the file keeps its size and layout).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from core.memory.home_files import overwrite

log = logging.getLogger(__name__)

WIDTH = 12  # the shortest run of an erased text that is zeroed
# Printable ASCII, accented Latin letters and typographic punctuation in UTF-8: vector data
# seldom forms such a run, so the few runs found are checked against the erased texts.
_RUN = re.compile(
    rb"(?:[\x20-\x7e]|\xc3[\x80-\xbf]|\xc5[\x92\x93]|\xe2\x80[\x90-\xa6]){%d,}" % WIDTH
)


def _forms(text: str) -> set[bytes]:
    """The text as written, in lower case and without accents (lower case), in UTF-8."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return {f.encode("utf-8") for f in (text, text.lower(), plain.lower()) if f}


def scrub_index_files(root: Path, texts: Iterable[str]) -> int:
    """Zero every run of WIDTH or more bytes of these texts in the binary files under `root`
    (an embedded Chroma directory); return how many files changed."""
    forms = [f.lower() for t in texts if len(t) >= WIDTH for f in _forms(t)]
    if not forms or not root.is_dir():
        return 0
    changed = 0
    for path in sorted(root.rglob("*.bin")):
        try:
            data = bytearray(path.read_bytes())
        except OSError as exc:
            log.warning("forget: %s not read: %s", path.name, exc)
            continue
        hits = 0
        for run in _RUN.finditer(data):
            piece = run.group(0).lower()
            for start in range(len(piece) - WIDTH + 1):
                window = piece[start : start + WIDTH]
                if any(window in form for form in forms):
                    data[run.start() + start : run.start() + start + WIDTH] = bytes(WIDTH)
                    hits += 1
        if hits:
            overwrite(path, bytes(data))
            changed += 1
    return changed
