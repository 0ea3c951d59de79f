"""The `meta` table: small key/value facts about one home (which embedder made the vectors,
the tombstone key, the operator's ids revealed by imports, the last run of each job)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import col, select

from core.storage.dialect import insert_ignoring, upsert
from core.storage.models import Meta

if TYPE_CHECKING:
    from sqlmodel import Session

    from core.storage.db import Database


def get(db: Database, key: str) -> str | None:
    """The value stored under `key`, or None."""
    with db.session() as session:
        return session.exec(select(Meta.value).where(Meta.key == key)).first()


def put(db: Database, key: str, value: str) -> None:
    """Store `value` under `key`, replacing what was there."""
    with db.session(write=True) as session:
        session.exec(upsert(Meta, {"key": key, "value": value}, ["key"]))


def put_in(session: Session, key: str, value: str) -> None:
    """Store `value` under `key` inside a caller's write transaction (with its other writes)."""
    session.exec(upsert(Meta, {"key": key, "value": value}, ["key"]))


def put_once(db: Database, key: str, value: str) -> str:
    """Store `value` under `key` unless one is there already; return the value kept (the first
    writer's, when two processes race)."""
    with db.session(write=True) as session:
        session.exec(insert_ignoring(Meta, {"key": key, "value": value}))
        return session.exec(select(Meta.value).where(Meta.key == key)).one()


def with_prefix(db: Database, prefix: str) -> dict[str, str]:
    """Every key starting with `prefix`, and its value."""
    with db.session() as session:
        rows = session.exec(select(Meta.key, Meta.value).where(col(Meta.key).startswith(prefix)))
        return dict(rows.all())
