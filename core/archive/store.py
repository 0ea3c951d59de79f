"""The archive's write path: capture verbatim (or spool), chunk, and index in batches."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC
from functools import cached_property
from typing import TYPE_CHECKING, Any

from sqlmodel import col, func, select

from core.archive import turns
from core.archive.captures import Captures
from core.archive.chunking import ChunkPlan, ChunkSizes, plan_chunks, single_chunks
from core.archive.records import CaptureIn, CaptureResult, length_problem, reply_message_id
from core.errors import EloraError, InvalidInput, StorageUnavailable
from core.storage.db import db_time, from_db_time, run
from core.storage.models import Capture, Chunk

if TYPE_CHECKING:
    from core.archive.spool import Spool
    from core.clock import Clock
    from core.storage.db import Database
    from core.vectorspace import VectorSpace

log = logging.getLogger(__name__)

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

    def __init__(
        self,
        db: Database,
        clock: Clock,
        spool: Spool,
        vectorspace: VectorSpace,
        sizes: ChunkSizes,
        *,
        spooled: Callable[[], None] = lambda: None,
        store_traces: Callable[[list[dict[str, Any]]], int] | None = None,
    ):
        self.db = db
        self.clock = clock
        self.spool = spool
        self.vectorspace = vectorspace
        self.sizes = sizes
        self.spooled = spooled  # tells the replayer that something waits in the spool
        self.store_traces = store_traces  # the spool holds traces too: their owner stores them
        self._indexing = threading.Lock()
        # Reads and flag updates beyond the write path: consent, speakers, learning progress.
        self.captures = Captures(self.db)

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
            self.spooled()
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
        now = db_time(self.clock.now())
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
        s = self.sizes
        if windows:
            return plan_chunks(
                fresh,
                window_messages=s.window_messages,
                window_chars=s.window_chars,
                window_gap=s.window_gap,
                chunk_chars=s.chunk_chars,
                overlap=s.overlap,
            )
        plans: list[ChunkPlan] = []
        for c in fresh:
            if c.text.strip():
                plans.extend(single_chunks(c, s.chunk_chars, s.overlap))
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
                embedded = self._embed(rows)
                vectors = embedded.chunks
                ids = [r[0] for r in rows if r[0] in vectors]
                self.vectorspace.upsert_vectors(
                    "archive",
                    ids,
                    [vectors[i] for i in ids],
                    [
                        {
                            "chat_id": r[2],
                            "surface": r[3],
                            "kind": r[4],
                            "first_at": epoch_seconds(r[5]),
                        }
                        for r in rows
                        if r[0] in vectors
                    ],
                )
                if embedded.turn_ids:
                    self.vectorspace.upsert_vectors(
                        "turns", embedded.turn_ids, embedded.turn_vectors, embedded.turn_meta
                    )
            except EloraError as exc:
                log.warning("archive indexing deferred for %d chunks: %s", len(rows), exc)
                return done
            with self.db.session() as session:
                conn = session.connection()
                turns.save(conn, embedded)
                run(
                    conn,
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

    def _embed(self, rows: list[tuple]) -> turns.Embedded:
        """Each chunk's vector: the mean of its turn keys' (core.archive.turns), parts whole."""
        with self.db.session(write=True) as session:  # missing keys are created
            conn = session.connection()
            embed = turns.plan(
                conn, [(r[0], r[7], r[4], r[1]) for r in rows], self.sizes.window_gap
            )
        vectors = self.vectorspace.embed_passages(embed.texts) if embed.texts else []
        return turns.finish(embed, vectors)

    def _pending(self, chunk_ids: list[str] | None, limit: int) -> list[tuple]:
        sql = (
            "SELECT id, text, chat_id, surface, kind, first_at, speakers, rowid FROM chunks "
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

    def sources(self, capture_ids: list[str]) -> list[dict[str, Any]]:
        """Provenance of captures, oldest first: surface, chat, message id, date, speaker."""
        if not capture_ids:
            return []
        stmt = (
            select(Capture.id, Capture.surface, Capture.chat_id, Capture.message_id,
                   Capture.sent_at, Capture.sender, Capture.role)
            .where(col(Capture.id).in_(list(dict.fromkeys(capture_ids))))
            .order_by(Capture.sent_at)
        )  # fmt: skip
        with self.db.session() as session:
            rows = session.exec(stmt).all()
        return [
            {"capture_id": r[0], "surface": r[1], "chat_id": r[2], "message_id": r[3],
             "date": from_db_time(r[4]).isoformat(), "speaker": r[5] or r[6]}
            for r in rows
        ]  # fmt: skip

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

    def indexed_count(self) -> int:
        """Chunks whose vector is stored."""
        stmt = select(func.count()).select_from(Chunk).where(Chunk.vector_state == "indexed")
        with self.db.session() as session:
            return session.exec(stmt).one()

    # -- maintenance -----------------------------------------------------------------------

    def replay_spool(self) -> dict[str, int]:
        """Store every spooled capture and trace (idempotently), then index what is pending."""
        report = self.spool.replay(
            lambda batch: self.store_batch(batch, windows=False), self.store_traces
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

    def turn_vector_count(self) -> int:
        """Messages whose turn key holds a vector (the `turns` collection's share)."""
        with self.db.session() as session:
            return turns.vector_count(session.connection())

    def mark_all_pending(self) -> int:
        """Flag every chunk for re-embedding (after a model change); return how many."""
        with self.db.session() as session:
            conn = session.connection()
            turns.drop_vectors(conn)  # the turns' too
            return run(conn, "UPDATE chunks SET vector_state = 'pending'").rowcount
