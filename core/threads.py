"""The `threads` table: conversation windows, expert threads and sub-agent delegations, each one
row of JSON turns (core.conversation and core.council.threads use them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, String, type_coerce
from sqlmodel import col, select, update

from core.storage.models import Thread

if TYPE_CHECKING:
    from core.storage.db import Database


def get(db: Database, thread_id: str) -> Thread | None:
    """One thread by id, detached."""
    with db.session() as session:
        row = session.exec(select(Thread).where(Thread.id == thread_id)).first()
        if row is not None:
            session.expunge(row)
        return row


def turns_of(db: Database, thread_id: str) -> tuple[list[dict[str, Any]], str | None]:
    """A thread's turns (oldest first) and summary; empty when it does not exist yet."""
    with db.session() as session:
        row = session.exec(select(Thread).where(Thread.id == thread_id)).first()
        return (list(row.messages), row.summary) if row is not None else ([], None)


def edit(
    db: Database, thread_id: str, kind: str, chat_id: str, now: datetime,
    change: Callable[[Thread], None],
) -> None:  # fmt: skip
    """Let `change` edit a thread's turns and summary (created empty when new) and save it, in
    one write transaction."""
    with db.session(write=True) as session:
        row = session.exec(select(Thread).where(Thread.id == thread_id)).first()
        if row is None:
            row = Thread(id=thread_id, kind=kind, chat_id=chat_id, messages=[],
                         created_at=now, updated_at=now)  # fmt: skip
        change(row)
        row.updated_at = now
        session.add(row)


def save(
    db: Database, thread: Thread, messages: list[dict[str, Any]], summary: str, now: datetime
) -> None:
    """Persist a thread's messages and last summary (created on first save)."""
    with db.session(write=True) as session:
        row = session.exec(select(Thread).where(Thread.id == thread.id)).first() or thread
        row.messages = messages
        row.summary = summary
        row.role = thread.role
        row.updated_at = now
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)  # `thread` stays readable after the commit


def of_chat(db: Database, chat_id: str, kinds: tuple[str, ...]) -> list[Thread]:
    """A chat's threads of these kinds, most recently updated first."""
    stmt = (
        select(Thread)
        .where(Thread.chat_id == str(chat_id), col(Thread.kind).in_(kinds))
        .order_by(col(Thread.updated_at).desc())
    )
    with db.session() as session:
        rows = list(session.exec(stmt))
        for row in rows:
            session.expunge(row)
        return rows


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------


def scan_threads(conn: Connection) -> Iterator[tuple]:
    """(rowid, id, kind, messages, summary, role) of every thread, the turns as stored text."""
    stmt = select(
        Thread.rowid, Thread.id, Thread.kind, type_coerce(Thread.messages, String),
        Thread.summary, Thread.role,
    )  # fmt: skip
    yield from conn.execute(stmt)


def rewrite_thread(conn: Connection, rowid: int, values: dict[str, Any]) -> None:
    """New values for some columns of one thread (turns as Python values)."""
    conn.execute(update(Thread).where(col(Thread.rowid) == rowid).values(**values))
