"""Forgetting one entry for real: the entry leaves SQLite, FTS, Chroma and every mirror, and no
file keeps its text.

Without sources, the memory's copies go (the entry, proposals holding its text, its ids in
traces, its mirror files) and the archive stays. With `with_sources`, the messages it came from
go too, and so does every message that contains its text verbatim, with every copy of those
(chunks, windows, session memory, the spool): the same erase as `forget --matching`
(core/memory/copies.py says what a copy is; core/memory/erase.py erases it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.memory.copies import ErasePlan, find_copies, source_capture_ids
from core.memory.erase import EraseReport, erase

if TYPE_CHECKING:
    from core.services import Services

ForgetReport = EraseReport

__all__ = ["ForgetReport", "forget_entry", "forget_matching", "preview", "source_capture_ids"]


def forget_entry(
    services: Services, memory_id: str, with_sources: bool = False, keep=None
) -> EraseReport:
    """Erase one entry (and optionally its messages) from every store; log ids only. `keep`:
    see core.memory.erase.erase (core.memory.unforget holds an undo with it)."""
    return erase(services, memory_id=memory_id, with_sources=with_sources, keep=keep)


def forget_matching(services: Services, phrase: str) -> EraseReport:
    """Erase every copy of a phrase (case and accents aside) from every store and file."""
    return erase(services, phrase=phrase)


def preview(
    services: Services,
    *,
    phrase: str | None = None,
    memory_id: str | None = None,
    with_sources: bool = False,
) -> ErasePlan:
    """What a forget would erase, erasing nothing.

    What waits in the spool is archived first, as the forget itself does: otherwise a replay
    poked by any write of this process races the scan, and the preview shows neither the
    spool file nor the message it became.
    """
    services.replayer.replay_now()
    return find_copies(services, phrase=phrase, memory_id=memory_id, with_sources=with_sources)
