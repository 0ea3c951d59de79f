"""A conversation window's distilled turns as session chunks, with the vectors the archive has.

When a window is distilled (core.conversation) its older turns go to session memory. They are
messages the archive holds and has embedded already, one vector per turn (its turn key,
core.archive.turns). So the turns are cut into chunks of whole turns, and a chunk whose turns all
have a vector takes their mean, as an archive window does: distilling a long window costs no
embedding of its own. A chunk with a turn not embedded yet (or unknown to the archive, or too
long to share a chunk) is embedded from its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.archive.chunking import split_text
from core.archive.turns import stored_vectors, unit_mean

if TYPE_CHECKING:
    from core.storage.db import Database


@dataclass
class TurnChunk:
    """Whole turns joined into one chunk's text, and their captures (None: not archived)."""

    text: str = ""
    capture_ids: list[str | None] = field(default_factory=list)


def turn_line(turn: dict[str, Any]) -> str:
    """A window turn as session memory keeps it: role, minute, what was said."""
    return f"{turn['role']} ({turn.get('at', '')[:16]}): {turn['content']}"


def turn_chunks(turns: Sequence[dict[str, Any]], size: int, overlap: int) -> list[TurnChunk]:
    """Consecutive turns joined up to `size` characters a chunk; a longer turn is cut into
    overlapping parts of its own (embedded from their text)."""
    chunks: list[TurnChunk] = []
    current = TurnChunk()
    for turn in turns:
        line = turn_line(turn)
        if current.text and len(current.text) + 2 + len(line) > size:
            chunks.append(current)
            current = TurnChunk()
        if len(line) > size:
            chunks.extend(TurnChunk(part, [None]) for part in split_text(line, size, overlap))
            continue
        current.text = f"{current.text}\n\n{line}" if current.text else line
        current.capture_ids.append(turn.get("capture_id"))
    if current.text:
        chunks.append(current)
    return chunks


def archived_vectors(db: Database, chunks: Sequence[TurnChunk]) -> list[np.ndarray | None]:
    """Each chunk's vector from its turns' vectors in the archive, or None when one is missing."""
    wanted = [i for chunk in chunks for i in chunk.capture_ids if i is not None]
    if not wanted:
        return [None] * len(chunks)
    with db.reading() as conn:
        known = stored_vectors(conn, wanted)
    return [
        unit_mean([known[i] for i in chunk.capture_ids])
        if all(i in known for i in chunk.capture_ids)
        else None
        for chunk in chunks
    ]
