"""Database helpers for tests that run on SQLite and on PostgreSQL alike.

`locked(services)` plays another process holding the write lock (SQLite: BEGIN EXCLUSIVE on
the file; PostgreSQL: EXCLUSIVE locks on the archive's tables, so writers wait for their
lock_timeout while plain reads go on, as under SQLite's WAL). `search(...)` asks the real full-text index, whichever it is.
`server_files()` lists the files a PostgreSQL server keeps the test home's tables, indexes
and TOAST data in (a forget test reads them byte by byte, as it reads elora.db); the server's
data directory comes from ELORA_TEST_PG_DATA (tests/pg_cluster.py publishes it).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
            conn.exec_driver_sql(f"LOCK TABLE {', '.join(LOCKED_TABLES)} IN EXCLUSIVE MODE")
            try:
                yield
            finally:
                conn.rollback()
    finally:
        engine.dispose()


def search(services, index: str, words: list[str], every: bool = False) -> list[tuple]:
    """Rows (text, rank) of a full-text index ("captures", "chunks", "entries", "turn_keys")
    matching words."""
    column = {"entries": "t.canonical_text", "turn_keys": "t.keys"}.get(index, "t.text")
    match = fulltext.Match([(w, False) for w in words], every=every)
    with services.db.session() as session:
        return fulltext.matching(session.connection(), index, match, select=column, alias="t")


def texts(services, index: str, *words: str) -> list[str]:
    """Texts of the rows of an index matching any of the words, best first."""
    return [row[0] for row in search(services, index, list(words))]


def home_database_url() -> str | None:
    """The PostgreSQL URL of the test's home (None when it runs on SQLite)."""
    url = os.environ.get("ELORA_DATABASE_URL", "")
    return url if url.startswith("postgresql") else None


def _engine(url: str):
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    return create_engine(url, poolclass=NullPool)


def server_files(url: str) -> list[tuple[Path, str]]:
    """(file, relation) for every file holding the tables, indexes and TOAST data of the URL's
    schema, after a CHECKPOINT has written what the server had only in memory; a TOAST
    relation is named after its table ("entry_versions TOAST")."""
    data = os.environ.get("ELORA_TEST_PG_DATA")
    assert data, "set ELORA_TEST_PG_DATA to the server's data directory (tests/pg_cluster does)"
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("CHECKPOINT")
            rows = conn.exec_driver_sql(
                "WITH mine AS (SELECT c.oid, c.relname, c.reltoastrelid FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()), "
                "toast AS (SELECT reltoastrelid AS oid, relname || ' TOAST' AS relname FROM mine "
                "WHERE reltoastrelid <> 0) "
                "SELECT pg_relation_filepath(oid), relname FROM mine UNION "
                "SELECT pg_relation_filepath(oid), relname FROM toast UNION "
                "SELECT pg_relation_filepath(i.indexrelid), t.relname || ' index' FROM pg_index i "
                "JOIN toast t ON t.oid = i.indrelid"
            ).all()
    finally:
        engine.dispose()
    files = {}
    for relative, relname in rows:
        if relative:
            base = Path(data) / relative
            files |= {p: relname for p in base.parent.glob(base.name + "*") if p.is_file()}
    return sorted(files.items())


def index_finds(url: str, words: set[str]) -> set[str]:
    """The words a search of PostgreSQL's full-text columns still finds in the schema."""
    found = set()
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            for word in words:
                query = "(to_tsquery('elora_fr', %(w)s) || to_tsquery('elora_en', %(w)s))"
                for table in ("captures", "chunks", "memory_entries"):
                    hit = conn.exec_driver_sql(
                        f"SELECT 1 FROM {table} WHERE search @@ {query} LIMIT 1", {"w": word}
                    ).first()
                    if hit:
                        found.add(word)
    finally:
        engine.dispose()
    return found
