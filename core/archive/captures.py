"""The archive's rows beyond the write path (core.archive.store writes and indexes them): who
said what, what consent withholds, what `elora learn` already read, the turn before a message,
and the row edits a forget makes. With store.py, the one owner of captures, chunks,
chunk_captures and learned_captures (and their full-text indexes)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, String, type_coerce
from sqlmodel import col, delete, func, select, update

from core.storage.dialect import insert_ignoring
from core.storage.models import Capture, Chunk, ChunkCapture, LearnedCapture

if TYPE_CHECKING:
    from core.storage.db import Database

BATCH = 500  # ids per IN (...) list, well under SQLite's variable limit
# Only messages a job may learn from (core.learning.consent says why one may not).
LEARNABLE = col(Capture.consent).is_(None)


def _batches(ids: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(ids), BATCH):
        yield ids[start : start + BATCH]


class Captures:
    """Reads and flag updates on archived messages, for consent, speakers and learning."""

    def __init__(self, db: Database):
        self.db = db

    def consent_flags(self, capture_ids: Iterable[str]) -> list[tuple[str, str, str | None]]:
        """(id, text, consent flag) of these captures (missing ones are left out)."""
        rows: list[tuple[str, str, str | None]] = []
        with self.db.session() as session:
            for part in _batches(list(dict.fromkeys(capture_ids))):
                stmt = select(Capture.id, Capture.text, Capture.consent)
                rows += session.exec(stmt.where(col(Capture.id).in_(part))).all()
        return rows

    def withhold(self, capture_ids: Iterable[str], flag: str) -> int:
        """Flag captures as material for no job (those not flagged already); return how many."""
        changed = 0
        with self.db.session(write=True) as session:
            for part in _batches(list(dict.fromkeys(capture_ids))):
                stmt = update(Capture).where(col(Capture.id).in_(part), LEARNABLE)
                changed += session.exec(stmt.values(consent=flag)).rowcount
        return changed

    def previous(self, capture_id: str, same_speaker: bool = False) -> Capture | None:
        """The message before this one in its chat (from the same speaker, when asked), or
        None; the capture itself must exist."""
        with self.db.session() as session:
            this = session.exec(select(Capture).where(Capture.id == capture_id)).first()
            if this is None:
                return None
            earlier = (col(Capture.sent_at) < this.sent_at) | (
                (col(Capture.sent_at) == this.sent_at) & (col(Capture.rowid) < this.rowid)
            )
            stmt = select(Capture).where(
                Capture.surface == this.surface, Capture.chat_id == this.chat_id, earlier
            )
            if same_speaker:
                stmt = stmt.where(
                    Capture.role == "user", col(Capture.user_id).is_not_distinct_from(this.user_id)
                )
            stmt = stmt.order_by(col(Capture.sent_at).desc(), col(Capture.rowid).desc())
            row = session.exec(stmt.limit(1)).first()
            if row is not None:
                session.expunge(row)
            return row

    def sent_at(self, capture_id: str) -> datetime | None:
        """When a message was sent."""
        with self.db.session() as session:
            return session.exec(select(Capture.sent_at).where(Capture.id == capture_id)).first()

    def latest_sent_at(self, capture_ids: list[str]) -> datetime | None:
        """When the latest of these messages was sent."""
        if not capture_ids:
            return None
        stmt = select(func.max(Capture.sent_at)).where(col(Capture.id).in_(capture_ids))
        with self.db.session() as session:
            return session.exec(stmt).one()

    def adjacent(
        self, surface: str, chat_id: str, sent_at: datetime, rowid: int, *, before: bool = True,
        role: str | None = None, learnable: bool = False,
    ) -> Capture | None:  # fmt: skip
        """The nearest message before (or after) a point of a chat: of `role` only, and only
        one a job may learn from when `learnable`; None when there is none."""
        if before:
            side = (col(Capture.sent_at) < sent_at) | (
                (col(Capture.sent_at) == sent_at) & (col(Capture.rowid) < rowid)
            )
            order = (col(Capture.sent_at).desc(), col(Capture.rowid).desc())
        else:
            side = (col(Capture.sent_at) > sent_at) | (
                (col(Capture.sent_at) == sent_at) & (col(Capture.rowid) > rowid)
            )
            order = (col(Capture.sent_at).asc(), col(Capture.rowid).asc())
        stmt = select(Capture).where(Capture.surface == surface, Capture.chat_id == chat_id, side)
        if role is not None:
            stmt = stmt.where(Capture.role == role)
        if learnable:
            stmt = stmt.where(LEARNABLE)
        with self.db.session() as session:
            row = session.exec(stmt.order_by(*order).limit(1)).first()
            if row is not None:
                session.expunge(row)
            return row

    def user_turns(self, start: datetime, end: datetime, offset: int, limit: int) -> list[tuple]:
        """(id, text, chat, sent_at, surface, rowid, sender, message id) of the learnable user
        turns of a period, oldest first."""
        stmt = (
            select(
                Capture.id,
                Capture.text,
                Capture.chat_id,
                Capture.sent_at,
                Capture.surface,
                Capture.rowid,
                Capture.sender,
                Capture.message_id,
            )
            .where(Capture.role == "user", LEARNABLE)
            .where(col(Capture.sent_at) >= start, col(Capture.sent_at) < end)
            .order_by(Capture.sent_at)
        )
        with self.db.session() as session:
            return list(session.exec(stmt.offset(offset).limit(limit)).all())

    def learnable_messages(self, after: int, limit: int, min_chars: int = 0) -> list[tuple]:
        """(rowid, id, text, sender, is_operator) of the user messages a job may learn from,
        after a rowid, in archive order (keyset paging: an index range however large)."""
        stmt = (
            select(Capture.rowid, Capture.id, Capture.text, Capture.sender, Capture.is_operator)
            .where(col(Capture.rowid) > after, Capture.role == "user", LEARNABLE)
            .where(func.length(Capture.text) >= min_chars)
            .order_by(col(Capture.rowid))
        )
        with self.db.session() as session:
            return list(session.exec(stmt.limit(limit)).all())

    def mark_operators(self, operator_ids: list[str]) -> int:
        """Mark Telegram messages of these ids as the operator's and, where nobody was known
        before, the others' as not; return how many changed (a decision is never reversed)."""
        telegram_user = (Capture.surface == "telegram") & (Capture.role == "user")
        said = col(Capture.user_id).in_(operator_ids)
        with self.db.session(write=True) as session:
            changed = session.exec(
                update(Capture)
                .where(telegram_user, said, col(Capture.is_operator).is_not(True))
                .values(is_operator=True)
            ).rowcount
            changed += session.exec(
                update(Capture)
                .where(telegram_user, col(Capture.user_id).is_not(None), ~said)
                .where(col(Capture.is_operator).is_(None))
                .values(is_operator=False)
            ).rowcount
        return changed

    # -- learning progress (`elora learn`) -------------------------------------------------

    def _unlearned(self, stmt, chat_id: str | None, since: datetime | None):
        stmt = (
            stmt.outerjoin(LearnedCapture, col(LearnedCapture.capture_id) == Capture.id)
            .where(col(LearnedCapture.capture_id).is_(None), Capture.role == "user")
            .where(func.length(Capture.text) >= 8, LEARNABLE)
        )
        if chat_id is not None:
            stmt = stmt.where(Capture.chat_id == str(chat_id))
        if since is not None:
            stmt = stmt.where(col(Capture.sent_at) >= since)
        return stmt

    def unlearned(self, chat_id: str | None, since: datetime | None, limit: int) -> list[tuple]:
        """(id, text, sent_at, sender, is_operator, user_id, surface) of user messages not yet
        learned from, oldest first (a message under a consent instruction is never pending)."""
        columns = select(Capture.id, Capture.text, Capture.sent_at, Capture.sender,
                         Capture.is_operator, Capture.user_id, Capture.surface)  # fmt: skip
        stmt = self._unlearned(columns, chat_id, since).order_by(Capture.sent_at).limit(limit)
        with self.db.session() as session:
            return list(session.exec(stmt).all())

    def count_unlearned(self, chat_id: str | None, since: datetime | None) -> int:
        """How many user messages may still be learned from."""
        stmt = self._unlearned(select(func.count()).select_from(Capture), chat_id, since)
        with self.db.session() as session:
            return session.exec(stmt).one()

    def mark_learned(self, capture_ids: list[str], now: datetime) -> None:
        """Record that extraction ran over these messages (a rerun resumes after them)."""
        if not capture_ids:
            return
        rows = [{"capture_id": c, "learned_at": now} for c in dict.fromkeys(capture_ids)]
        with self.db.session(write=True) as session:
            for part in _batches(rows):
                session.exec(insert_ignoring(LearnedCapture, part))


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------


def scan_messages(conn: Connection) -> Iterator[tuple]:
    """(rowid, id, surface, chat, sent_at, role, kind, sender, text, media, provenance) of every
    message by chat and date; dates and JSON as stored text (searched as they are stored)."""
    stmt = select(
        Capture.rowid, Capture.id, Capture.surface, Capture.chat_id,
        type_coerce(Capture.sent_at, String), Capture.role, Capture.kind, Capture.sender,
        Capture.text, type_coerce(Capture.media, String), type_coerce(Capture.provenance, String),
    ).order_by(Capture.chat_id, Capture.sent_at)  # fmt: skip
    yield from conn.execute(stmt)


def texts_of(conn: Connection, capture_rowids: list[int]) -> list[str]:
    """The texts of these captures (what a forget must also scrub from binary files)."""
    found: list[str] = []
    for part in _batches(capture_rowids):
        found += [
            t for (t,) in conn.execute(select(Capture.text).where(col(Capture.rowid).in_(part)))
        ]
    return found


def chunks_of(conn: Connection, capture_rowids: list[int]) -> dict[int, str]:
    """{chunk rowid: chunk id} of the chunks covering these captures."""
    found: dict[int, str] = {}
    for part in _batches(capture_rowids):
        stmt = (
            select(Chunk.rowid, Chunk.id)
            .join(ChunkCapture, col(ChunkCapture.chunk_rowid) == Chunk.rowid)
            .where(col(ChunkCapture.capture_rowid).in_(part))
        )
        found.update(dict(conn.execute(stmt).all()))
    return found


def delete_messages(conn: Connection, rowids: list[int], capture_ids: list[str]) -> None:
    """Delete captures (their chunk links go with them) and their learning marks."""
    for part in _batches(rowids):
        conn.execute(delete(Capture).where(col(Capture.rowid).in_(part)))
    for part in _batches(capture_ids):
        conn.execute(delete(LearnedCapture).where(col(LearnedCapture.capture_id).in_(part)))


def chunk_turns(conn: Connection, chunk_rowid: int) -> list[tuple[str | None, str, str, str]]:
    """(sender, role, text, message id) of the captures a chunk still covers, in order."""
    stmt = (
        select(Capture.sender, Capture.role, Capture.text, Capture.message_id)
        .join(ChunkCapture, col(ChunkCapture.capture_rowid) == Capture.rowid)
        .where(ChunkCapture.chunk_rowid == chunk_rowid)
        .order_by(Capture.sent_at)
    )
    return list(conn.execute(stmt).all())


def drop_chunk(conn: Connection, chunk_rowid: int) -> None:
    """Delete a chunk left without captures."""
    conn.execute(delete(Chunk).where(col(Chunk.rowid) == chunk_rowid))


def rewrite_chunk(
    conn: Connection, chunk_rowid: int, text: str, message_ids: list[str], speakers: list[str]
) -> None:
    """Give a chunk its remaining text, to be embedded again."""
    conn.execute(
        update(Chunk)
        .where(col(Chunk.rowid) == chunk_rowid)
        .values(text=text, message_ids=message_ids, speakers=speakers, vector_state="pending")
    )


def optimize_search(conn: Connection) -> None:
    """Merge the archive's full-text segments so deleted terms leave the files (FTS5; on
    PostgreSQL a forget rewrites the tables afterwards, core.memory.erase)."""
    if conn.dialect.name != "sqlite":
        return
    for fts in ("captures_fts", "chunks_fts"):
        conn.exec_driver_sql(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
