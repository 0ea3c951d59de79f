"""The rows fading reads and writes (core.memory.fading decides): how often each entry reached
an evidence pack (`entry_recalls`), and the fading entries of `memory_entries` (which may fade,
marking them faded, the audit's counts). With entries.py, an owner of memory_entries."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import literal_column
from sqlmodel import col, func, select, update

from core.memory import versions
from core.storage import meta
from core.storage.dialect import json_field, upsert
from core.storage.models import EntryRecall, MemoryEntry
from core.undo.context import labelled

if TYPE_CHECKING:
    from core.storage.db import Database

BATCH = 500  # ids per IN (...) list, well under SQLite's variable limit

Recalls = dict[str, tuple[int, datetime | None]]


def recalls_of(db: Database, uuids: list[str]) -> Recalls:
    """{uuid: (recalls, last recalled)} counted so far, for the entries that have any."""
    found: Recalls = {}
    with db.session() as session:
        for start in range(0, len(uuids), BATCH):
            part = uuids[start : start + BATCH]
            stmt = select(EntryRecall.uuid, EntryRecall.recalls, EntryRecall.last_recalled_at)
            for uuid, n, at in session.exec(stmt.where(col(EntryRecall.uuid).in_(part))):
                found[uuid] = (n, at)
    return found


def add_recalls(db: Database, fresh: Recalls, watermark: tuple[str, str]) -> None:
    """Add new recalls to the counts (keeping the latest date) and move the traces watermark,
    in one transaction: a crash counts them again neither twice nor never."""
    with db.session(write=True) as session:
        uuids = list(fresh)
        stored: Recalls = {}
        for start in range(0, len(uuids), BATCH):
            part = uuids[start : start + BATCH]
            stmt = select(EntryRecall.uuid, EntryRecall.recalls, EntryRecall.last_recalled_at)
            stored.update(
                (u, (n, at))
                for u, n, at in session.exec(stmt.where(col(EntryRecall.uuid).in_(part)))
            )
        for uuid, (more, later) in fresh.items():
            n, at = stored.get(uuid, (0, None))
            last = max((t for t in (at, later) if t), default=None)
            row = {"uuid": uuid, "recalls": n + more, "last_recalled_at": last}
            session.exec(upsert(EntryRecall, row, ["uuid"]))
        meta.put_in(session, *watermark)


def fadeable(db: Database, tiers: Collection[str], max_importance: int) -> list[MemoryEntry]:
    """Active entries of these tiers at most this important (those that can fade)."""
    stmt = select(MemoryEntry).where(
        MemoryEntry.status == "active",
        col(MemoryEntry.tier).in_(tiers),
        MemoryEntry.importance <= max_importance,
    )
    with db.session() as session:
        rows = list(session.exec(stmt))
        for r in rows:
            session.expunge(r)
    return rows


def mark_faded(db: Database, reasons: dict[str, str], now: datetime) -> list[MemoryEntry]:
    """Mark these entries (by memory_id, with why) faded, those still active; their vectors
    wait for the new status. Return the entries changed."""
    rows = []
    with db.session(write=True) as session:
        stmt = select(MemoryEntry).where(col(MemoryEntry.memory_id).in_(list(reasons)))
        for row in session.exec(stmt):
            if row.status != "active":  # changed meanwhile (forgotten, superseded)
                continue
            versions.keep_baseline(session, row)
            row.attributes = {**row.attributes, "faded_at": now.isoformat(),
                              "fade_reason": reasons[row.memory_id]}  # fmt: skip
            row.status, row.vector_state = "faded", "pending"
            session.add(row)
            rows.append(row)
        session.flush()
        with labelled("fade"):  # in the entry's history, and no undo spans it unseen
            for row in rows:
                session.refresh(row)
                versions.record(session, row, False, now)
                session.expunge(row)
    return rows


def mark_indexed(db: Database, uuids: Iterable[str]) -> None:
    """Record that these entries' vectors carry their current status."""
    uuids = list(uuids)
    with db.session(write=True) as session:
        for start in range(0, len(uuids), BATCH):
            part = col(MemoryEntry.uuid).in_(uuids[start : start + BATCH])
            session.exec(update(MemoryEntry).where(part).values(vector_state="indexed"))


def fading_counts(db: Database, since: datetime) -> tuple[int, int, int]:
    """(faded in all, faded since a moment, restored since it), for the audit."""
    since_text = since.isoformat()
    faded = MemoryEntry.status == "faded"
    # JSON is stored as text on every database: the dialect's own function reads a field.
    faded_at = literal_column(json_field(db.dialect, "memory_entries.attributes", "faded_at"))
    restored_at = literal_column(json_field(db.dialect, "memory_entries.attributes", "restored_at"))
    stmt = select(
        func.count().filter(faded),
        func.count().filter(faded & (faded_at >= since_text)),
        func.count().filter(restored_at >= since_text),
    ).select_from(MemoryEntry)
    with db.session() as session:
        counts = session.exec(stmt).one()
    return int(counts[0]), int(counts[1]), int(counts[2])
