"""Erasing every copy found by `core.memory.copies`, so that no file under ELORA_HOME keeps it.

SQLite runs with secure_delete (freed bytes are zeroed); the FTS5 indexes are merged
('optimize') so deleted terms leave their segments; the WAL is checkpointed and truncated.
PostgreSQL rewrites the tables that held text (VACUUM FULL, their tsvector columns and GIN
indexes included), so no dead row version stays in their files.
Chroma holds ids, vectors and a few metadata fields (never text): the vectors of erased
chunks, entries, session chunks and messages (turn keys) are deleted, and windows rewritten without an erased
message are embedded again. Files are handled by `core.memory.home_files`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core import threads as thread_rows
from core.archive import captures as archive_rows
from core.archive import turns as turn_rows
from core.errors import EloraError
from core.learning import proposals as proposal_rows
from core.memory import entries as entry_rows
from core.memory import session as session_rows
from core.memory import versions
from core.memory.copies import ErasePlan, resolve_target, scan_database
from core.memory.home_files import erase_files, find_files
from core.memory.index_files import scrub_index_files
from core.memory.tombstones import bury, bury_entry, log_forget
from core.recall.tokens import count_tokens
from core.traces import rewrite_trace
from core.undo import log as undo_log

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from core.services import Services

log = logging.getLogger(__name__)

# Tables whose rows a forget deletes or rewrites: on PostgreSQL each is rewritten afterwards.
# (`updates`: the shared update queue of several workers; a finished update keeps no text, but
# its earlier row versions may, until rewritten.)
TEXT_TABLES = ["captures", "chunks", "memory_entries", "entry_links", "proposals",
               "session_chunks", "threads", "traces", "updates", "turn_keys", "entry_versions",
               "undo_actions", "captures_vocab"]  # fmt: skip


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
        erased = archive_rows.texts_of(conn, [m.rowid for m in plan.messages])
        removed, rewritten, dropped = _erase_messages(conn, plan)
        buried = entry_rows.canonical_texts(conn, [e.uuid for e in plan.entries])
        erased += buried + ([plan.target.phrase.text] if plan.target.phrase else [])
        _erase_rows(conn, plan)
        _rewrite_rows(conn, plan)
        target = plan.target
        log_forget(
            conn, entry_uuid=target.entry_uuid or "", with_sources=target.with_sources,
            matching=target.matching, removed_captures=removed,
            removed_entries=len(plan.entries), at=services.clock.now(),
        )  # fmt: skip
        entry_rows.optimize_search(conn)
        archive_rows.optimize_search(conn)
        turn_rows.optimize_search(conn)
    # Nothing re-proposes what was forgotten, by id or by phrase (core.memory.tombstones).
    bury(services, buried)
    # Token counts are kept per process with the texts as keys: erased texts leave them too.
    count_tokens.cache_clear()
    vectors_erased = _erase_vectors(services, plan, dropped, rewritten)
    if not services.settings.chroma_url:  # leftovers in the embedded index's files
        scrub_index_files(services.settings.chroma_dir, erased)
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
    chunks = archive_rows.chunks_of(conn, rowids)
    archive_rows.delete_messages(conn, rowids, [m.capture_id for m in plan.messages])
    rewritten, dropped = [], []
    for chunk_rowid, chunk_id in chunks.items():
        rest = archive_rows.chunk_turns(conn, chunk_rowid)
        if not rest:
            archive_rows.drop_chunk(conn, chunk_rowid)
            dropped.append(chunk_id)
            continue
        text = "\n".join(f"{sender or role}: {body}" for sender, role, body, _ in rest)
        speakers = list(dict.fromkeys(sender for sender, *_ in rest if sender))
        archive_rows.rewrite_chunk(conn, chunk_rowid, text, [m for *_, m in rest], speakers)
        rewritten.append(chunk_id)
    return len(rowids), rewritten, dropped


def _erase_rows(conn: Connection, plan: ErasePlan) -> None:
    """Entries (with their links), proposals, session chunks, versions and undo rows."""
    uuids = [e.uuid for e in plan.entries]
    if uuids:
        entry_rows.delete_entries(conn, uuids)
        proposal_rows.unlink_conflicts(conn, uuids)
    if plan.proposals:
        proposal_rows.delete_proposals(conn, plan.proposals)
    chunk_ids = [c for s in plan.sessions for c in s.chunk_ids]
    if chunk_ids:
        session_rows.delete_session_chunks(conn, chunk_ids)
    versions.delete_versions(conn, plan.versions)
    undo_log.delete_actions(conn, plan.undo_actions)


# Who rewrites the rows of each table a plan names.
REWRITES = {
    "threads": thread_rows.rewrite_thread,
    "traces": rewrite_trace,
    "entry_links": entry_rows.rewrite_link,
}


def _rewrite_rows(conn: Connection, plan: ErasePlan) -> None:
    """Threads without their erased turns, traces and link notes without the text."""
    for rewrite in (*plan.threads, *plan.traces, *plan.links):
        REWRITES[rewrite.table](conn, rewrite.rowid, rewrite.values)


def _erase_vectors(
    services: Services, plan: ErasePlan, dropped: list[str], rewritten: list[str]
) -> bool:
    """Delete the vectors of what went and embed the rewritten windows; False when the vector
    store could not be reached (it holds no text; `elora reindex` rebuilds it)."""
    try:
        services.vectors.delete("memory", [e.uuid for e in plan.entries])
        services.vectors.delete("archive", dropped)
        services.vectors.delete("ephemeral", [c for s in plan.sessions for c in s.chunk_ids])
        # Each erased message's own vector (its turn key), kept under the capture id.
        services.vectors.delete("turns", [m.capture_id for m in plan.messages])
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
