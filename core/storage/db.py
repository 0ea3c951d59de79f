"""The database: one engine per process. SQLite by default (WAL and secure_delete on every
connection); PostgreSQL for servers and several workers (core/storage/postgres.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    DateTime,
    Engine,
    TextClause,
    bindparam,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.types import NullType
from sqlmodel import Session

from core.errors import StorageUnavailable
from core.storage import postgres
from core.storage.migrations import migrate
from core.storage.models import JSONText

# SQLite error texts that mean "cannot write now, try the spool" rather than a bug.
UNAVAILABLE_MARKERS = (
    "database is locked",
    "database table is locked",
    "readonly database",
    "unable to open database",
    "disk i/o error",
    "database or disk is full",
    "disk is full",
)


def is_unavailable(exc: BaseException) -> bool:
    """True when a database error means the store cannot be written right now."""
    if (
        postgres.sqlstate(exc) is not None
        or "psycopg" in type(getattr(exc, "orig", exc)).__module__
    ):
        return postgres.is_unavailable(exc)
    message = str(getattr(exc, "orig", exc)).lower()
    return isinstance(exc, OperationalError | sqlite3.OperationalError) and any(
        marker in message for marker in UNAVAILABLE_MARKERS
    )


class Database:
    """Owns the engine; hands out sessions; knows where its file is."""

    def __init__(self, url: str, busy_timeout_ms: int = 5000):
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        self._engine: Engine | None = None

    @property
    def dialect(self) -> str:
        """ "sqlite" or "postgresql"."""
        return "postgresql" if postgres.is_postgres(self.url) else "sqlite"

    @property
    def path(self) -> Path | None:
        """The database file, or None for an in-memory database or a server."""
        if self.dialect != "sqlite":
            return None
        database = make_url(self.url).database
        return Path(database) if database and database != ":memory:" else None

    @property
    def engine(self) -> Engine:
        """The engine, created (and the schema migrated) on first use."""
        if self._engine is None:
            self._engine = self._create_engine()
        return self._engine

    def _create_engine(self) -> Engine:
        if self.dialect == "postgresql":
            return self._migrated(postgres.create(self.url, self.busy_timeout_ms))
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # e.g. a parent is a file or the disk is read-only
                raise StorageUnavailable(f"database {self.url}: {exc}") from exc
        engine = create_engine(self.url, connect_args={"timeout": self.busy_timeout_ms / 1000})
        busy = int(self.busy_timeout_ms)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            # Let SQLAlchemy own transactions (pysqlite's implicit BEGIN skips DDL).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {busy}")
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
            cur.execute("PRAGMA secure_delete = ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            # A transaction that reads then writes must start IMMEDIATE: deferred, it would fail
            # at once with "database is locked" when another connection wrote in between (a
            # WAL snapshot cannot be upgraded); IMMEDIATE waits its turn for the write lock.
            # Plain reads stay deferred so they never wait for a writer.
            immediate = conn.get_execution_options().get("elora_immediate", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return self._migrated(engine)

    def _migrated(self, engine: Engine) -> Engine:
        try:
            with engine.connect() as conn:
                migrate(conn)
        except OperationalError as exc:
            engine.dispose()
            raise StorageUnavailable(f"database {self.safe_url}: {exc.orig}") from exc
        return engine

    @property
    def safe_url(self) -> str:
        """The URL without its password (for messages and diagnostics)."""
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def session(self, write: bool = False) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error.

        `write=True` for read-modify-write work: the write lock is taken at BEGIN.
        """
        engine = self.engine.execution_options(elora_immediate=True) if write else self.engine
        try:
            with Session(engine) as session:
                yield session
                session.commit()
        except DBAPIError as exc:
            if is_unavailable(exc):
                raise StorageUnavailable(f"database unavailable: {exc.orig}") from exc
            raise

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Every row of one raw SQL query (`?` placeholders), in its own short transaction."""
        with self.session() as session:
            return list(session.connection().execute(qmark(sql, params)).all())

    def execute(self, sql: str, params: tuple = ()) -> int:
        """Run one raw SQL statement (`?` placeholders) in its own transaction; the number of
        rows it changed."""
        with self.session() as session:
            return session.connection().execute(qmark(sql, params)).rowcount

    def checkpoint(self, tables: list[str] | None = None) -> None:
        """After forgetting: SQLite folds the WAL back into the main file and truncates it;
        PostgreSQL rewrites the `tables` without the old versions of erased rows."""
        if self.dialect == "postgresql":
            postgres.vacuum(self.engine, tables or [])
            return
        raw = self.engine.raw_connection()  # outside any transaction, as checkpoints require
        try:
            raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            raw.close()

    def close(self) -> None:
        """Dispose of every pooled connection."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def statement(sql: str, params: dict[str, Any] | None = None) -> TextClause:
    """Raw SQL with named parameters bound, the same on SQLite and PostgreSQL: datetimes as
    DateTime (SQLite's text form, PostgreSQL's timestamp), dicts and lists as JSON, anything
    else as the driver takes it (no cast, so the server infers the column's type); parameters
    the SQL does not name are left out."""
    clause = text(sql)
    names = set(clause._bindparams)  # the :names the SQL uses
    bound = [bindparam(name, value, type_=_type_of(value)) for name, value in
             (params or {}).items() if name in names]  # fmt: skip
    return clause.bindparams(*bound)


def _type_of(value: Any):
    if isinstance(value, datetime):
        return DateTime()
    if isinstance(value, dict | list):
        return JSONText()
    return NullType()


def run(conn: Connection, sql: str, params: tuple | list = ()):
    """Execute raw SQL written with `?` placeholders on either database; its result. A list
    of parameter tuples runs it once per tuple (as exec_driver_sql does)."""
    if isinstance(params, list) and params and isinstance(params[0], tuple | list):
        return run_many(conn, sql, params)
    return conn.execute(qmark(sql, params))


def run_many(conn: Connection, sql: str, rows: list[tuple]) -> None:
    """Execute raw SQL written with `?` placeholders once per row of parameters."""
    if not rows:
        return
    clause = qmark(sql, rows[0])
    names = list(clause._bindparams)
    unbound = text(clause.text).bindparams(
        *(bindparam(n, type_=_type_of(v)) for n, v in zip(names, rows[0], strict=True))
    )
    conn.execute(unbound, [dict(zip(names, row, strict=True)) for row in rows])


def qmark(sql: str, params: tuple | list = ()) -> TextClause:
    """SQL written with `?` placeholders (outside quotes) as a statement() for either
    database: the marks become named parameters bound in order."""
    out, values, quote = [], {}, None
    for char in sql:
        if quote:
            quote = None if char == quote else quote
            if char == ":":  # a colon in a literal is no parameter
                char = "\\:"
        elif char in "'\"":
            quote = char
        elif char == "?":
            name = f"q{len(values)}"
            values[name] = params[len(values)]
            out.append(f":{name}")
            continue
        out.append(char)
    if len(values) != len(params):
        raise ValueError(f"{len(params)} parameters for {len(values)} placeholders: {sql[:80]}")
    return statement("".join(out), values)


def db_time(value) -> str | None:
    """A datetime in the exact text form SQLAlchemy uses for SQLite, so raw and ORM rows agree."""
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S.%f")


def from_db_time(value):
    """A datetime read back from SQLite (text or datetime), as a naive UTC datetime."""
    from datetime import datetime

    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
