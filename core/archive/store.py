"""The archive's write path: capture verbatim (or spool), chunk, and index in batches."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from core.archive.chunking import ChunkPlan, plan_chunks, single_chunks
from core.archive.records import CaptureIn, CaptureResult, length_problem, reply_message_id
from core.errors import EloraError, InvalidInput, StorageUnavailable
from core.storage.db import db_time, from_db_time, run, run_many

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

ROLE_LABELS = {"user", "assistant", "system"}

# ON CONFLICT DO NOTHING (SQLite and PostgreSQL alike): a capture or chunk stored before is
# skipped, and RETURNING then gives no row.
_INSERT_CAPTURE = """
INSERT INTO captures (id, surface, user_id, chat_id, message_id, sender, role, kind,
    text, sent_at, captured_at, reply_to, media, provenance, consent, is_operator)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING rowid
"""
_INSERT_CHUNK = """
INSERT INTO chunks (id, kind, surface, chat_id, text, message_ids, speakers,
    first_at, last_at, part, vector_state)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT DO NOTHING RETURNING rowid
"""


def embedding_text(text: str, speakers: list[str]) -> str:
    """A chunk's text as embedded: each speaker named once per turn, by first name.

    The model is paid per token, so full "Camille Martin: " labels on every line cost about a
    fifth of an import; but who said something matters for recall ("what did Léa say…"), so a
    short label stays where the speaker changes. Full names stay in the chunk's text (FTS).
    """
    names = sorted(set(speakers) | ROLE_LABELS, key=len, reverse=True)
    if not names:
        return text
    label = re.compile(rf"^({'|'.join(re.escape(n) for n in names if n)}): ")
    lines, previous = [], None
    for line in text.split("\n"):
        match = label.match(line)
        if match is None:
            lines.append(line)
            continue
        speaker = match.group(1)
        body = line[match.end() :]
        lines.append(body if speaker == previous else f"{speaker.split()[0]}: {body}")
        previous = speaker
    return "\n".join(lines)


def epoch_seconds(value) -> int:
    """A stored datetime (naive UTC) as Unix seconds, the form vector metadata keeps."""
    return int(from_db_time(value).replace(tzinfo=UTC).timestamp())


def _driver_sql(sql: str, dialect: str) -> str:
    """SQL for the DBAPI cursor itself: psycopg marks parameters %s where sqlite3 says ?."""
    return sql.replace("?", "%s") if dialect == "postgresql" else sql


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


class Archive:
    """Captures, chunks and their vectors; the first thing every request touches."""

    def __init__(self, services: Services):
        self.services = services
        self.settings = services.settings
        self.db = services.db
        self.spool = services.spool
        self._indexing = threading.Lock()

    @cached_property
    def indexer(self):
        """The background indexer that embeds new chunks of every chat after the replies."""
        from core.archive.indexer import Indexer

        return Indexer(self)

    # -- writing ---------------------------------------------------------------------------

    def capture(self, item: CaptureIn, index: bool = True) -> CaptureResult:
        """Archive one message verbatim before anything else; spool it if the DB is unwritable."""
        too_long = length_problem(item.text)
        if too_long:
            raise InvalidInput(f"message {item.message_id} is {too_long}")
        try:
            new, chunk_ids = self._write([item], windows=False)
        except StorageUnavailable as exc:
            self.spool.append(item, reason=str(exc))
            # Info, not warning: the surface tells the user once (a note), the replay logs
            # what it stored, and a CLI's stderr stays one line.
            log.info("database unavailable, capture %s spooled: %s", item.id, exc)
            self.services.replayer.spooled()
            return CaptureResult(item.id, "spooled")
        if not new:
            return CaptureResult(self._existing_id(item), "duplicate")
        indexed = self.index_pending(chunk_ids=chunk_ids) > 0 if index and chunk_ids else False
        return CaptureResult(item.id, "stored", indexed=indexed, chunk_ids=tuple(chunk_ids))

    def store_batch(self, items: list[CaptureIn], windows: bool = True) -> int:
        """Store captures in one transaction, ignoring known ones; return how many were new."""
        new, _ = self._write(items, windows=windows)
        return new

    def _write(self, items: list[CaptureIn], windows: bool) -> tuple[int, list[str]]:
        """Insert captures and their chunks atomically; return the new count and chunk ids."""
        now = db_time(self.services.clock.now())
        dialect = self.db.dialect

        def write(session) -> tuple[int, list[str]]:
            # The DBAPI cursor directly: SQLAlchemy's per-statement overhead was most of an
            # import batch's time under the write lock. The lock is held since BEGIN IMMEDIATE
            # (PostgreSQL: since the advisory write turn).
            cur = session.connection().connection.driver_connection.cursor()
            fresh, rowids = self._insert_captures(cur, dialect, items, now)
            plans = self._plan(fresh, windows)
            return len(fresh), self._insert_chunks(cur, dialect, plans, rowids)

        return self.db.write(write)

    def _insert_captures(self, cur: Any, dialect: str, items, now):
        fresh: list[CaptureIn] = []
        rowids: dict[str, int] = {}
        for c in items:
            row = cur.execute(
                _driver_sql(_INSERT_CAPTURE, dialect),
                (
                    c.id, c.surface, c.user_id, c.chat_id, c.message_id, c.sender, c.role,
                    c.kind, c.text, db_time(c.sent_at), now, c.reply_to,
                    _dumps(c.media), _dumps(c.provenance), c.consent, c.operator,
                ),
            ).fetchone()  # fmt: skip
            if row is not None:
                fresh.append(c)
                rowids[c.id] = row[0]
        return fresh, rowids

    def _plan(self, fresh: list[CaptureIn], windows: bool) -> list[ChunkPlan]:
        s = self.settings
        if windows:
            return plan_chunks(
                fresh,
                window_messages=s.window_messages,
                window_chars=s.window_chars,
                window_gap=timedelta(minutes=s.window_gap_minutes),
                chunk_chars=s.chunk_chars,
                overlap=s.chunk_overlap_chars,
            )
        plans: list[ChunkPlan] = []
        for c in fresh:
            if c.text.strip():
                plans.extend(single_chunks(c, s.chunk_chars, s.chunk_overlap_chars))
        return plans

    def _insert_chunks(self, cur: Any, dialect: str, plans: list[ChunkPlan], rowids) -> list[str]:
        ids = []
        for p in plans:
            row = cur.execute(
                _driver_sql(_INSERT_CHUNK, dialect),
                (
                    p.id, p.kind, p.surface, p.chat_id, p.text, _dumps(p.message_ids),
                    _dumps(p.speakers), db_time(p.first_at), db_time(p.last_at), p.part,
                ),
            ).fetchone()  # fmt: skip
            if row is None:
                continue
            ids.append(p.id)
            cur.executemany(
                _driver_sql(
                    "INSERT INTO chunk_captures (chunk_rowid, capture_rowid) VALUES (?, ?) "
                    "ON CONFLICT DO NOTHING",
                    dialect,
                ),
                [(row[0], rowids[cid]) for cid in p.capture_ids],
            )
        return ids

    # -- indexing --------------------------------------------------------------------------

    def _existing_id(self, item: CaptureIn) -> str:
        """The id under which this message was archived before."""
        with self.db.session() as session:
            row = run(
                session.connection(),
                "SELECT id FROM captures WHERE id = ? OR (surface = ? AND chat_id = ? AND message_id = ?)",
                (item.id, item.surface, item.chat_id, item.message_id),
            ).first()
        return row[0] if row else item.id

    def index_pending(
        self,
        chunk_ids: list[str] | None = None,
        batch_size: int = 64,
        on_progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed chunks still marked pending and store their vectors; return how many were done.

        A failing embedder leaves the chunks pending (they stay searchable lexically) and is
        logged; the next run, the replay job or `elora reindex` picks them up. Runs are
        serialised so two requests never embed the same chunks twice.
        """
        with self._indexing:
            return self._index_pending(chunk_ids, batch_size, on_progress)

    def _index_pending(self, chunk_ids, batch_size, on_progress) -> int:
        done = 0
        while True:
            rows = self._pending(chunk_ids, batch_size)
            if not rows:
                return done
            try:
                self.services.vectorspace.upsert(
                    "archive",
                    [r[0] for r in rows],
                    [embedding_text(r[1], json.loads(r[6])) for r in rows],
                    [
                        {
                            "chat_id": r[2],
                            "surface": r[3],
                            "kind": r[4],
                            "first_at": epoch_seconds(r[5]),
                        }
                        for r in rows
                    ],
                )
            except EloraError as exc:
                log.warning("archive indexing deferred for %d chunks: %s", len(rows), exc)
                return done
            with self.db.session() as session:
                run_many(
                    session.connection(),
                    "UPDATE chunks SET vector_state = 'indexed' WHERE id = ?",
                    [(r[0],) for r in rows],
                )
            done += len(rows)
            if on_progress:
                on_progress(len(rows))
            if chunk_ids is not None:
                finished = {r[0] for r in rows}
                chunk_ids = [c for c in chunk_ids if c not in finished]
                if not chunk_ids:
                    return done

    def _pending(self, chunk_ids: list[str] | None, limit: int) -> list[tuple]:
        sql = (
            "SELECT id, text, chat_id, surface, kind, first_at, speakers FROM chunks "
            "WHERE vector_state = 'pending'"
        )
        params: tuple = ()
        if chunk_ids is not None:
            chunk_ids = chunk_ids[:limit]
            sql += f" AND id IN ({','.join('?' * len(chunk_ids))})"
            params = tuple(chunk_ids)
        sql += f" ORDER BY rowid LIMIT {int(limit)}"
        with self.db.session() as session:
            return list(run(session.connection(), sql, params).all())

    # -- reading ---------------------------------------------------------------------------

    def capture_ids_of(self, chunk_id: str) -> list[str]:
        """Ids of the captures a chunk covers."""
        with self.db.session() as session:
            rows = run(
                session.connection(),
                "SELECT c.id FROM captures c JOIN chunk_captures cc ON cc.capture_rowid = c.rowid "
                "JOIN chunks k ON k.rowid = cc.chunk_rowid WHERE k.id = ?",
                (chunk_id,),
            ).all()
        return [r[0] for r in rows]

    def answer_to(self, surface: str, chat_id: str, message_id: str) -> tuple[str, str] | None:
        """(id of the message, the archived answer's text) when this message was answered."""
        with self.db.session() as session:
            row = run(
                session.connection(),
                "SELECT m.id, a.text FROM captures m JOIN captures a ON a.surface = m.surface "
                "AND a.chat_id = m.chat_id AND a.message_id = ? AND a.role = 'assistant' "
                "WHERE m.surface = ? AND m.chat_id = ? AND m.message_id = ?",
                (reply_message_id(message_id), surface, str(chat_id), message_id),
            ).first()
        return (row[0], row[1]) if row else None

    def counts(self) -> dict[str, int]:
        """Rows in the archive: captures, chunks, and chunks still waiting for a vector."""
        with self.db.session() as session:
            conn = session.connection()
            one = lambda sql: run(conn, sql).scalar_one()  # noqa: E731
            return {
                "captures": one("SELECT count(*) FROM captures"),
                "chunks": one("SELECT count(*) FROM chunks"),
                "chunks_pending_vectors": one(
                    "SELECT count(*) FROM chunks WHERE vector_state = 'pending'"
                ),
            }

    # -- maintenance -----------------------------------------------------------------------

    def replay_spool(self) -> dict[str, int]:
        """Store every spooled capture and trace (idempotently), then index what is pending."""
        report = self.spool.replay(
            lambda batch: self.store_batch(batch, windows=False), self.services.traces.store_spooled
        )
        indexed = self.index_pending()
        return {
            "files": report.files,
            "lines": report.lines,
            "stored": report.stored,
            "traces": report.traces,
            "unreadable": report.unreadable,
            "indexed": indexed,
        }

    def mark_all_pending(self) -> int:
        """Flag every chunk for re-embedding (after a model change); return how many."""
        with self.db.session() as session:
            result = run(session.connection(), "UPDATE chunks SET vector_state = 'pending'")
            return result.rowcount
