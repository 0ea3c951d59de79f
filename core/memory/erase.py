"""Erasing every copy found by `core.memory.copies`, so that no file under ELORA_HOME keeps it.

SQLite runs with secure_delete (freed bytes are zeroed); the FTS5 indexes are merged
('optimize') so deleted terms leave their segments; the WAL is checkpointed and truncated.
PostgreSQL rewrites the tables that held text (VACUUM FULL, their tsvector columns and GIN
indexes included), so no dead row version stays in their files.
Chroma holds ids, vectors and a few metadata fields (never text): the vectors of erased
chunks, entries and session chunks are deleted, and windows rewritten without an erased
message are embedded again. Files are handled by `core.memory.home_files`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from core.errors import EloraError
from core.memory.copies import ErasePlan, resolve_target, scan_database
from core.memory.home_files import erase_files, find_files
from core.memory.tombstones import bury, bury_entry
from core.storage.db import db_time, run

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

FTS_INDEXES = ("entries_fts", "captures_fts", "chunks_fts")
# Tables whose rows a forget deletes or rewrites: on PostgreSQL each is rewritten afterwards.
# (`updates`: the shared update queue of several workers; a finished update keeps no text, but
# its earlier row versions may, until rewritten.)
TEXT_TABLES = ["captures", "chunks", "memory_entries", "entry_links", "proposals",
               "session_chunks", "threads", "traces", "updates"]  # fmt: skip
JSON_COLUMNS = {"threads": {"messages"}, "traces": {"classification", "pack", "models",
                "escalations", "tool_calls", "learning", "feedback"}}  # fmt: skip


@dataclass(frozen=True)
class EraseReport:
    """What a forget erased (ids and counts only: the content is gone)."""

    memory_id: str | None
    removed_captures: int
    removed_chunks: int
    rewritten_chunks: int
    removed_proposals: int
    removed_entries: list[str] = field(default_factory=list)
    removed_session_chunks: int = 0
    scrubbed_threads: int = 0
    scrubbed_traces: int = 0
    files: list[dict[str, str]] = field(default_factory=list)
    left_files: list[str] = field(default_factory=list)
    vectors_erased: bool = True
    wal_truncated: bool = True

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return dict(self.__dict__)


def erase(
    services: Services,
    *,
    phrase: str | None = None,
    memory_id: str | None = None,
    with_sources: bool = False,
    keep: Callable[[Connection, ErasePlan], None] | None = None,
) -> EraseReport:
    """Find every copy again inside one write transaction and erase it from every store.
    `keep(conn, plan)` sees the rows before they go (an undo held in memory, never on disk)."""
    target = resolve_target(services, phrase=phrase, memory_id=memory_id, with_sources=with_sources)
    # What waits in the spool goes into the database first, so the one scan below finds every
    # copy: a replay racing the erase (any write pokes it) would bring a copy back afterwards.
    services.replayer.replay_now()
    if target.memory_id:  # its proposals' wordings are tombstoned too, before they go
        bury_entry(services, services.memory.require(target.memory_id))
    with services.db.session(write=True) as session:
        conn = session.connection()
        plan = scan_database(conn, target)
        if keep is not None:
            keep(conn, plan)
        removed, rewritten, dropped = _erase_messages(conn, plan)
        buried = _entry_texts(conn, plan)
        _erase_rows(conn, plan)
        _rewrite_rows(conn, plan)
        _log(conn, services, plan, removed)
        if services.db.dialect == "sqlite":
            for fts in FTS_INDEXES:
                run(conn, f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    # Nothing re-proposes what was forgotten, by id or by phrase (core.memory.tombstones).
    bury(services, buried)
    vectors_erased = _erase_vectors(services, plan, dropped, rewritten)
    plan.files = find_files(services, plan)
    changed = erase_files(services, plan)
    wal_truncated = _checkpoint(services)
    log.info(
        "forgot %d message(s), %d entr(ies), %d proposal(s), %d file(s)",
        removed, len(plan.entries), len(plan.proposals), len(changed),
    )  # fmt: skip
    return EraseReport(
        memory_id=target.memory_id,
        removed_captures=removed,
        removed_chunks=len(dropped),
        rewritten_chunks=len(rewritten),
        removed_proposals=len(plan.proposals),
        removed_entries=[e.memory_id for e in plan.entries],
        removed_session_chunks=sum(len(s.chunk_ids) for s in plan.sessions),
        scrubbed_threads=len(plan.threads),
        scrubbed_traces=len(plan.traces),
        files=[{"path": f.relative, "action": f.action} for f in changed],
        left_files=[f.relative for f in plan.files if f.action == "left"],
        vectors_erased=vectors_erased,
        wal_truncated=wal_truncated,
    )


def _erase_messages(conn: Connection, plan: ErasePlan) -> tuple[int, list[str], list[str]]:
    """Delete captures; rewrite the windows that covered them without them, drop the chunks
    left empty; return (messages removed, chunk ids rewritten, chunk ids dropped)."""
    rowids = [m.rowid for m in plan.messages]
    if not rowids:
        return 0, [], []
    chunks: dict[int, str] = {}
    for rowid in rowids:
        for chunk_rowid, chunk_id in run(
            conn,
            "SELECT c.rowid, c.id FROM chunks c JOIN chunk_captures cc ON cc.chunk_rowid = c.rowid "
            "WHERE cc.capture_rowid = ?",
            (rowid,),
        ):
            chunks[chunk_rowid] = chunk_id
    run(conn, "DELETE FROM captures WHERE rowid = ?", [(r,) for r in rowids])
    run(
        conn,
        "DELETE FROM learned_captures WHERE capture_id = ?",
        [(m.capture_id,) for m in plan.messages],
    )
    rewritten, dropped = [], []
    for chunk_rowid, chunk_id in chunks.items():
        rest = run(
            conn,
            "SELECT c.sender, c.role, c.text, c.message_id FROM captures c "
            "JOIN chunk_captures cc ON cc.capture_rowid = c.rowid WHERE cc.chunk_rowid = ? "
            "ORDER BY c.sent_at",
            (chunk_rowid,),
        ).all()
        if not rest:
            run(conn, "DELETE FROM chunks WHERE rowid = ?", (chunk_rowid,))
            dropped.append(chunk_id)
            continue
        text = "\n".join(f"{sender or role}: {body}" for sender, role, body, _ in rest)
        speakers = list(dict.fromkeys(sender for sender, *_ in rest if sender))
        run(
            conn,
            "UPDATE chunks SET text = ?, message_ids = ?, speakers = ?, vector_state = 'pending' "
            "WHERE rowid = ?",
            (text, json.dumps([m for *_, m in rest]), json.dumps(speakers), chunk_rowid),
        )
        rewritten.append(chunk_id)
    return len(rowids), rewritten, dropped


def _entry_texts(conn: Connection, plan: ErasePlan) -> list[str]:
    """The canonical texts of the entries about to be erased (for their tombstones)."""
    uuids = [e.uuid for e in plan.entries]
    texts: list[str] = []
    for start in range(0, len(uuids), 500):
        part = uuids[start : start + 500]
        rows = run(
            conn,
            "SELECT canonical_text FROM memory_entries WHERE uuid IN "
            f"({','.join('?' * len(part))})",
            tuple(part),
        ).all()
        texts += [text for (text,) in rows if text]
    return texts


def _erase_rows(conn: Connection, plan: ErasePlan) -> None:
    """Entries (with their links), proposals, session chunks, versions and undo rows."""
    uuids = [(e.uuid,) for e in plan.entries]
    if uuids:
        run(conn, "DELETE FROM memory_entries WHERE uuid = ?", uuids)
        run(conn, "DELETE FROM entry_links WHERE from_uuid = ? OR to_uuid = ?",
                             [(u, u) for (u,) in uuids])  # fmt: skip
        run(
            conn,
            "UPDATE proposals SET conflict_uuid = NULL, conflict_relation = NULL "
            "WHERE conflict_uuid = ?",
            uuids,
        )
    if plan.proposals:
        run(conn, "DELETE FROM proposals WHERE id = ?", [(p,) for p in plan.proposals])
    chunk_ids = [(c,) for s in plan.sessions for c in s.chunk_ids]
    if chunk_ids:
        run(conn, "DELETE FROM session_chunks WHERE id = ?", chunk_ids)
    if plan.versions:
        run(conn, "DELETE FROM entry_versions WHERE id = ?",
            [(v,) for v in plan.versions])  # fmt: skip
    if plan.undo_actions:
        run(conn, "DELETE FROM undo_actions WHERE id = ?",
            [(a,) for a in plan.undo_actions])  # fmt: skip


def _rewrite_rows(conn: Connection, plan: ErasePlan) -> None:
    """Threads without their erased turns, traces and link notes without the text."""
    for rewrite in (*plan.threads, *plan.traces, *plan.links):
        json_columns = JSON_COLUMNS.get(rewrite.table, set())
        columns = list(rewrite.values)
        values = [
            json.dumps(rewrite.values[c]) if c in json_columns else rewrite.values[c]
            for c in columns
        ]
        assignments = ", ".join(f"{c} = ?" for c in columns)
        run(
            conn,
            f"UPDATE {rewrite.table} SET {assignments} WHERE rowid = ?",
            (*values, rewrite.rowid),
        )


def _log(conn: Connection, services: Services, plan: ErasePlan, removed: int) -> None:
    """One forget_log row: the named entry's uuid (never a slug) or '' for a phrase, counts."""
    target = plan.target
    run(conn,
        "INSERT INTO forget_log (entry_uuid, with_sources, removed_captures, forgotten_at, "
        "matching, removed_entries) VALUES (?, ?, ?, ?, ?, ?)",
        (target.entry_uuid or "", target.with_sources, removed,
         db_time(services.clock.now()), target.matching, len(plan.entries)),
    )  # fmt: skip


def _erase_vectors(
    services: Services, plan: ErasePlan, dropped: list[str], rewritten: list[str]
) -> bool:
    """Delete the vectors of what went and embed the rewritten windows; False when the vector
    store could not be reached (it holds no text; `elora reindex` rebuilds it)."""
    try:
        services.vectors.delete("memory", [e.uuid for e in plan.entries])
        services.vectors.delete("archive", dropped)
        services.vectors.delete("ephemeral", [c for s in plan.sessions for c in s.chunk_ids])
    except EloraError as exc:
        log.warning("forget: vectors not deleted (no text is stored with them): %s", exc)
        return False
    if rewritten:
        services.archive.index_pending(chunk_ids=rewritten)
    return True


def _checkpoint(services: Services) -> bool:
    """SQLite: fold the WAL into the main file and truncate it; False when a reader kept it.
    PostgreSQL: rewrite the tables that held text (their search index with them), so no old
    row version stays in their files (the server's WAL and backups age out on their own)."""
    services.db.checkpoint(TEXT_TABLES)
    path = services.db.path
    if path is None:
        return True
    wal = path.with_name(path.name + "-wal")
    return not wal.exists() or wal.stat().st_size == 0
