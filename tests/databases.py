"""Database helpers for tests that run on SQLite and on PostgreSQL alike.

`locked(services)` plays another process holding the write lock (SQLite: BEGIN EXCLUSIVE on
the file; PostgreSQL: ACCESS EXCLUSIVE locks on the archive's tables, so writers wait for
their lock_timeout). `search(...)` asks the real full-text index, whichever it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from core.storage import fulltext

LOCKED_TABLES = ("captures", "chunks", "chunk_captures", "traces")


def is_postgres(services) -> bool:
    """Whether the test runs against PostgreSQL."""
    return services.db.dialect == "postgresql"


@contextmanager
def locked(services) -> Iterator[None]:
    """Another process holding the database's write lock while the block runs."""
    if not is_postgres(services):
        locker = sqlite3.connect(services.db.path, isolation_level=None)
        try:
            locker.execute("BEGIN EXCLUSIVE")
            yield
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        return
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    engine = create_engine(services.db.url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"LOCK TABLE {', '.join(LOCKED_TABLES)} IN ACCESS EXCLUSIVE MODE")
            try:
                yield
            finally:
                conn.rollback()
    finally:
        engine.dispose()


def search(services, index: str, words: list[str], every: bool = False) -> list[tuple]:
    """Rows (text, rank) of a full-text index ("captures", "chunks", "entries") matching words."""
    column = "t.canonical_text" if index == "entries" else "t.text"
    match = fulltext.Match([(w, False) for w in words], every=every)
    with services.db.session() as session:
        return fulltext.matching(session.connection(), index, match, select=column, alias="t")


def texts(services, index: str, *words: str) -> list[str]:
    """Texts of the rows of an index matching any of the words, best first."""
    return [row[0] for row in search(services, index, list(words))]
