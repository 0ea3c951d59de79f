"""Ephemeral session memory: big inputs chunked per user + chat + source, purged at session end."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlmodel import col, delete, func, select

from core.archive.chunking import split_text
from core.errors import EloraError
from core.ids import new_id
from core.memory.session_turns import archived_vectors, turn_chunks
from core.recall.lexical import fold, terms
from core.storage.models import SessionChunk

if TYPE_CHECKING:
    import numpy as np

    from core.clock import Clock
    from core.storage.db import Database
    from core.vectorspace import VectorSpace

log = logging.getLogger(__name__)

SESSION_CHUNK_CHARS = 900
SESSION_OVERLAP_CHARS = 120


@dataclass(frozen=True)
class SessionHit:
    """A chunk of session memory and its calibrated score (0..1)."""

    source_id: str
    position: int
    text: str
    score: float


class SessionMemory:
    """Working memory of one session; nothing here outlives the session or its TTL."""

    def __init__(
        self, db: Database, clock: Clock, vectorspace: VectorSpace, ttl_hours: float,
        threshold: float,
    ):  # fmt: skip
        self.db = db
        self.clock = clock
        self.vectorspace = vectorspace
        self.ttl = timedelta(hours=ttl_hours)
        self.threshold = threshold  # calibrated similarity a search hit must reach

    def save(self, user_id: str, chat_id: str, source_id: str, text: str) -> int:
        """Chunk and index text under its source_id; return the number of chunks."""
        pieces = split_text(text, SESSION_CHUNK_CHARS, SESSION_OVERLAP_CHARS)
        return self._store(user_id, chat_id, source_id, pieces, [None] * len(pieces))

    def save_turns(
        self, user_id: str, chat_id: str, source_id: str, turns: Sequence[dict[str, Any]]
    ) -> int:
        """Keep a window's distilled turns under source_id, whole turns to a chunk; a chunk
        whose turns the archive has embedded takes their vectors' mean instead of being
        embedded again (core.memory.session_turns). The number of chunks."""
        chunks = turn_chunks(turns, SESSION_CHUNK_CHARS, SESSION_OVERLAP_CHARS)
        vectors = archived_vectors(self.db, chunks)
        return self._store(user_id, chat_id, source_id, [c.text for c in chunks], vectors)

    def _store(
        self, user_id: str, chat_id: str, source_id: str, pieces: list[str],
        vectors: list[np.ndarray | None],
    ) -> int:  # fmt: skip
        """Keep the pieces as chunks, with their vectors (the missing ones embedded)."""
        now = self.clock.now()
        expires = now + self.ttl
        rows = [
            SessionChunk(
                id=new_id(),
                user_id=str(user_id),
                chat_id=str(chat_id),
                source_id=source_id,
                position=n,
                text=piece,
                created_at=now,
                expires_at=expires,
            )
            for n, piece in enumerate(pieces)
        ]
        # Kept aside: once committed, the rows are expired and detached and cannot be read.
        ids = [r.id for r in rows]
        with self.db.session(write=True) as session:
            start = session.exec(
                select(SessionChunk.position)
                .where(SessionChunk.source_id == source_id, SessionChunk.chat_id == str(chat_id))
                .order_by(col(SessionChunk.position).desc())
            ).first()
            offset = 0 if start is None else start + 1
            for row in rows:
                row.position += offset
                session.add(row)
        meta = {"user_id": str(user_id), "chat_id": str(chat_id), "source_id": source_id}
        try:
            missing = [n for n, vector in enumerate(vectors) if vector is None]
            if missing:
                fresh = self.vectorspace.embed_passages([pieces[n] for n in missing])
                vectors = list(vectors)
                for n, vector in zip(missing, fresh, strict=True):
                    vectors[n] = vector
            self.vectorspace.upsert_vectors(
                "ephemeral",
                ids,
                vectors,
                [{**meta, "expires_at": int(expires.timestamp())} for _ in ids],
            )
        except EloraError as exc:
            log.warning("session memory stored without vectors (lexical only): %s", exc)
        return len(rows)

    def search(
        self, user_id: str, chat_id: str, source_id: str, query: str, limit: int = 5,
        threshold: float | None = None,
    ) -> list[SessionHit]:  # fmt: skip
        """Chunks of one source above the (calibrated) threshold, best first."""
        threshold = self.threshold if threshold is None else threshold
        partition = {"user_id": str(user_id), "chat_id": str(chat_id), "source_id": source_id}
        where = {"$and": [{k: v} for k, v in partition.items()]}
        scores: dict[str, float] = {}
        try:
            hits = self.vectorspace.query("ephemeral", query, limit * 2, where)
            calibrate = self.vectorspace.embedder.calibrate
            scores = {h.id: calibrate(h.similarity) for h in hits}
        except EloraError as exc:
            log.warning("session search degraded to lexical: %s", exc)
            return self._lexical(partition, query, limit)
        keep = {i: s for i, s in scores.items() if s >= threshold}
        with self.db.session() as session:
            rows = session.exec(select(SessionChunk).where(col(SessionChunk.id).in_(list(keep))))
            hits = [SessionHit(r.source_id, r.position, r.text, round(keep[r.id], 4)) for r in rows]
        return sorted(hits, key=lambda h: h.score, reverse=True)[:limit]

    def _lexical(self, partition: dict, query: str, limit: int) -> list[SessionHit]:
        words = terms(query)
        with self.db.session() as session:
            rows = [
                (r.source_id, r.position, r.text)
                for r in session.exec(
                    select(SessionChunk).where(
                        SessionChunk.user_id == partition["user_id"],
                        SessionChunk.chat_id == partition["chat_id"],
                        SessionChunk.source_id == partition["source_id"],
                    )
                )
            ]
        scored = []
        for source_id, position, body_text in rows:
            body = fold(body_text)
            found = sum(1 for w in words if w in body)
            if found:
                scored.append(SessionHit(source_id, position, body_text, found / len(words)))
        return sorted(scored, key=lambda h: h.score, reverse=True)[:limit]

    def sources(self, user_id: str, chat_id: str) -> list[str]:
        """The source_ids held for a session."""
        with self.db.session() as session:
            return list(
                session.exec(
                    select(SessionChunk.source_id)
                    .where(
                        SessionChunk.user_id == str(user_id), SessionChunk.chat_id == str(chat_id)
                    )
                    .distinct()
                )
            )

    def all_chunks(self) -> list[SessionChunk]:
        """Every session chunk held, in the order they were stored (a reindex reads them)."""
        with self.db.session() as session:
            rows = list(session.exec(select(SessionChunk).order_by(col(SessionChunk.rowid))))
            for row in rows:
                session.expunge(row)
        return rows

    def count(self) -> int:
        """Chunks held for every session."""
        with self.db.session() as session:
            return session.exec(select(func.count()).select_from(SessionChunk)).one()

    def end_session(self, user_id: str, chat_id: str) -> int:
        """Purge everything of one session (e.g. on /new); return chunks removed."""
        return self._purge(
            (SessionChunk.user_id == str(user_id)) & (SessionChunk.chat_id == str(chat_id))
        )

    def purge_expired(self) -> int:
        """Purge chunks past their TTL (the scheduled job); return chunks removed."""
        return self._purge(SessionChunk.expires_at <= self.clock.now())

    def _purge(self, condition) -> int:
        with self.db.session(write=True) as session:
            ids = list(session.exec(select(SessionChunk.id).where(condition)))
            for start in range(0, len(ids), 500):
                part = col(SessionChunk.id).in_(ids[start : start + 500])
                session.exec(delete(SessionChunk).where(part))
        if ids:
            self.vectorspace.index.delete("ephemeral", ids)
        return len(ids)


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------


def scan_session_chunks(conn: Connection) -> Iterator[tuple]:
    """(user_id, chat_id, source_id, id, text) of every session chunk, source by source."""
    stmt = select(
        SessionChunk.user_id, SessionChunk.chat_id, SessionChunk.source_id, SessionChunk.id,
        SessionChunk.text,
    ).order_by(SessionChunk.user_id, SessionChunk.chat_id, SessionChunk.source_id,
               SessionChunk.position)  # fmt: skip
    yield from conn.execute(stmt)


def delete_session_chunks(conn: Connection, chunk_ids: list[str]) -> None:
    """Delete session chunks by id."""
    for start in range(0, len(chunk_ids), 500):
        part = chunk_ids[start : start + 500]
        conn.execute(delete(SessionChunk).where(col(SessionChunk.id).in_(part)))
