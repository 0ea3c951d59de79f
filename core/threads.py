"""The `threads` table: conversation windows, expert threads and sub-agent delegations, each one
row of JSON turns (core.conversation and core.council.threads use them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, String, type_coerce
from sqlmodel import col, select, update

from core.storage.models import Thread

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
