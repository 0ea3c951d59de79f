"""Forgetting for real: the entry leaves SQLite, FTS and Chroma, and no file keeps its text.

SQLite runs with secure_delete (freed bytes are zeroed), FTS indexes are merged so deleted
terms leave their segments, and the WAL is checkpointed and truncated. Chroma never held the
text. With `with_sources`, the archived messages the entry came from are erased as well: their
captures, the chunks that covered them (windows are rewritten without them) and their vectors.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from core.memory.tombstones import bury_entry
from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForgetReport:
    """What forgetting removed (counts only: the content is gone)."""

    memory_id: str
    removed_captures: int
    removed_chunks: int
    rewritten_chunks: int
    removed_proposals: int


def source_capture_ids(sources: list[dict]) -> list[str]:
    """Capture ids named in an entry's sources."""
    return [s["capture_id"] for s in sources if isinstance(s, dict) and s.get("capture_id")]


def forget_entry(services: Services, memory_id: str, with_sources: bool = False) -> ForgetReport:
    """Erase one entry (and optionally its source messages) from every store; log ids only."""
    entry = services.memory.require(memory_id)
    bury_entry(services, entry)  # nothing re-proposes it (core.memory.tombstones)
    captures = source_capture_ids(entry.sources) if with_sources else []
    with services.db.session() as session:
        conn = session.connection()
        conn.exec_driver_sql("DELETE FROM memory_entries WHERE uuid = ?", (entry.uuid,))
        conn.exec_driver_sql(
            "DELETE FROM entry_links WHERE from_uuid = ? OR to_uuid = ?", (entry.uuid, entry.uuid)
        )
        proposals = conn.exec_driver_sql(
            "DELETE FROM proposals WHERE memory_id = ?", (memory_id,)
        ).rowcount
        conn.exec_driver_sql(
            "UPDATE proposals SET conflict_uuid = NULL, conflict_relation = NULL "
            "WHERE conflict_uuid = ?",
            (entry.uuid,),
        )
        removed, rewritten, dropped_chunks = _erase_captures(conn, captures)
        conn.exec_driver_sql(
            "INSERT INTO forget_log (entry_uuid, with_sources, removed_captures, forgotten_at) "
            "VALUES (?, ?, ?, ?)",
            (entry.uuid, with_sources, removed, db_time(services.clock.now())),
        )
        _scrub_traces(conn, memory_id)
        for fts in ("entries_fts", "captures_fts", "chunks_fts"):
            conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    services.vectors.delete("memory", [entry.uuid])
    if dropped_chunks:
        services.vectors.delete("archive", dropped_chunks)
    if rewritten:
        services.archive.index_pending(chunk_ids=rewritten)
    services.db.checkpoint()
    _remove_from_mirror(services.settings.mirror_dir, memory_id)
    log.info("forgot memory %s (sources erased: %d)", entry.uuid, removed)
    return ForgetReport(memory_id, removed, len(dropped_chunks), len(rewritten), proposals)


def _scrub_traces(conn: Connection, memory_id: str) -> None:
    """Traces list recalled item ids; a memory_id is a slug that may carry words of the text."""
    columns = ("pack", "tool_calls", "classification", "learning")
    pattern = f"%{memory_id}%"
    assignments = ", ".join(f"{c} = replace({c}, ?, '[forgotten]')" for c in columns)
    where = " OR ".join(f"{c} LIKE ?" for c in columns)
    conn.exec_driver_sql(
        f"UPDATE traces SET {assignments} WHERE {where}",
        (*([memory_id] * len(columns)), *([pattern] * len(columns))),
    )


def _remove_from_mirror(mirror: Path, memory_id: str) -> None:
    """The home's scheduled Markdown mirror must not keep a forgotten entry either."""
    entries = mirror / "entries"
    if entries.is_dir():
        for path in entries.rglob(f"{memory_id}.md"):
            path.unlink()
    manifest = mirror / "manifest.json"
    if manifest.exists():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data.get("entries", {}).pop(memory_id, None) is not None:
            manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
            index = mirror / "index.md"
            if index.exists():
                lines = index.read_text(encoding="utf-8").splitlines()
                kept = [line for line in lines if f"[{memory_id}]" not in line]
                index.write_text("\n".join(kept) + "\n", encoding="utf-8")


def _erase_captures(conn: Connection, capture_ids: list[str]) -> tuple[int, list[str], list[str]]:
    """Delete captures; rewrite or drop the chunks that covered them; scrub chat windows."""
    if not capture_ids:
        return 0, [], []
    marks = ",".join("?" * len(capture_ids))
    rows = conn.exec_driver_sql(
        f"SELECT rowid FROM captures WHERE id IN ({marks})", tuple(capture_ids)
    ).all()
    rowids = [r[0] for r in rows]
    if not rowids:
        return 0, [], []
    rmarks = ",".join("?" * len(rowids))
    chunks = conn.exec_driver_sql(
        f"SELECT DISTINCT c.rowid, c.id FROM chunks c JOIN chunk_captures cc "
        f"ON cc.chunk_rowid = c.rowid WHERE cc.capture_rowid IN ({rmarks})",
        tuple(rowids),
    ).all()
    conn.exec_driver_sql(f"DELETE FROM captures WHERE rowid IN ({rmarks})", tuple(rowids))
    rewritten, dropped = [], []
    for chunk_rowid, chunk_id in chunks:
        rest = conn.exec_driver_sql(
            "SELECT c.sender, c.role, c.text, c.message_id FROM captures c "
            "JOIN chunk_captures cc ON cc.capture_rowid = c.rowid WHERE cc.chunk_rowid = ? "
            "ORDER BY c.sent_at",
            (chunk_rowid,),
        ).all()
        if not rest:
            conn.exec_driver_sql("DELETE FROM chunks WHERE rowid = ?", (chunk_rowid,))
            dropped.append(chunk_id)
            continue
        text = "\n".join(f"{sender or role}: {body}" for sender, role, body, _ in rest)
        speakers = list(dict.fromkeys(sender for sender, *_ in rest if sender))
        conn.exec_driver_sql(
            "UPDATE chunks SET text = ?, message_ids = ?, speakers = ?, vector_state = 'pending' "
            "WHERE rowid = ?",
            (text, json.dumps([m for *_, m in rest]), json.dumps(speakers), chunk_rowid),
        )
        rewritten.append(chunk_id)
    _scrub_threads(conn, set(capture_ids))
    return len(rowids), rewritten, dropped


def _scrub_threads(conn: Connection, capture_ids: set[str]) -> None:
    """Remove erased messages from persisted conversation windows and threads."""
    for rowid, messages in conn.exec_driver_sql("SELECT rowid, messages FROM threads").all():
        items = json.loads(messages or "[]")
        kept = [m for m in items if m.get("capture_id") not in capture_ids]
        if len(kept) != len(items):
            conn.exec_driver_sql(
                "UPDATE threads SET messages = ? WHERE rowid = ?", (json.dumps(kept), rowid)
            )
