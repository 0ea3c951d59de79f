"""The database: one engine per process. SQLite by default (WAL and secure_delete on every
connection); PostgreSQL for servers and several workers (core/storage/postgres.py: there the
write turn is an advisory lock held by the transaction, and reads never wait).

Writers take turns instead of failing. In this process one turn (`Database.writer`,
core/storage/writer_turn.py) admits one write transaction at a time and serves a waiter that
has waited long in arrival order, so threads never race for SQLite's write lock nor starve;
between processes (bot, cockpit, CLI, import) SQLite's busy timeout makes a writer wait for the
other's commit. A transaction that reads before it writes must say so (`session(write=True)`: BEGIN
IMMEDIATE), because a deferred one could not upgrade its snapshot after someone else wrote and
would fail at once. "database is locked" therefore only surfaces when the database stayed
unwritable for the whole timeout, and that is what the spool is for.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

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
from core.storage.checkpoints import Checkpointer
from core.storage.migrations import migrate
from core.storage.models import JSONText
from core.storage.writer_turn import WriterTurn

log = logging.getLogger(__name__)
T = TypeVar("T")

# Reads go through a memory map of the file (the OS's pages, shared by every connection and
# process, instead of copies into each connection's 2 MB page cache): a present-state pack's
# ~900 scattered turn reads take about half the CPU (4.8 -> 2.2 ms at 100k messages). It is
# address space only; SQLite writes through ordinary file writes still.
MMAP_BYTES = 1 << 30
# A forget's TRUNCATE checkpoint, tried again while another process checkpoints.
TRUNCATE_TRIES = 4
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
# Statements that write; anything else (SELECT, WITH … SELECT, PRAGMA, BEGIN…) does not.
_WRITE = re.compile(r"^\s*(insert|update|delete|replace|create|drop|alter)\b", re.IGNORECASE)
_CONTROL = re.compile(r"^\s*(begin|commit|rollback|savepoint|release|pragma)\b", re.IGNORECASE)
_READ = "elora_read"  # connection info key: this transaction has read


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


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" (SQLITE_BUSY): someone else holds the lock."""
    message = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in message or "database table is locked" in message


class WriteAfterRead(RuntimeError):
    """A deferred transaction wrote after reading: it must be opened with write=True."""


class Database:
    """Owns the engine; hands out sessions; knows where its file is; serialises writers."""

    # Raise WriteAfterRead instead of logging it (the test suite turns this on).
    strict_writes = False

    def __init__(self, url: str, busy_timeout_ms: int = 15000):
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        self._engine: Engine | None = None
        self._creating = threading.Lock()
        # One write transaction at a time in this process, no waiter overtaken for long; not
        # reentrant, because the connection that took it may be returned to the pool by
        # another thread.
        self.writer = WriterTurn()
        self._holder = None  # the pooled connection record holding the writer turn
        self._writer_thread: int | None = None
        self._replay_hooks: list[Callable[[], None]] = []
        self._opening = False
        self._checkpoints: Checkpointer | None = None  # a file's WAL checkpoint (SQLite)

    @property
    def dialect(self) -> str:
        """ "sqlite" or "postgresql"."""
        return "postgresql" if postgres.is_postgres(self.url) else "sqlite"

    @property
    def safe_url(self) -> str:
        """The URL without its password (for messages and diagnostics)."""
        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def path(self) -> Path | None:
        """The database file, or None for an in-memory database or a server."""
        if self.dialect != "sqlite":
            return None
        database = make_url(self.url).database
        return Path(database) if database and database != ":memory:" else None

    @property
    def engine(self) -> Engine:
        """The engine, created (and the schema migrated) on first use, by one thread."""
        if self._engine is None:
            with self._creating:
                if self._engine is None:
                    self._engine = self._create_engine()
        return self._engine

    def _create_engine(self) -> Engine:
        if self.dialect == "postgresql":
            engine = postgres.create(self.url, self.busy_timeout_ms)

            @event.listens_for(engine, "before_cursor_execute")
            def _on_pg_execute(conn, _cursor, statement, _params, _context, _many):
                if _WRITE.match(statement):
                    conn.info["elora_wrote"] = True

            @event.listens_for(engine, "commit")
            def _on_pg_commit(conn):
                if conn.info.pop("elora_wrote", False):
                    self._after_write()

            return self._migrated(engine)
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # e.g. a parent is a file or the disk is read-only
                raise StorageUnavailable(f"database {self.url}: {exc}") from exc
        engine = create_engine(self.url, connect_args={"timeout": self.busy_timeout_ms / 1000})
        busy = int(self.busy_timeout_ms)
        if self.path is not None:
            self._checkpoints = Checkpointer(self.path)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            # Let SQLAlchemy own transactions (pysqlite's implicit BEGIN skips DDL).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {busy}")
            _set_wal(cur, busy / 1000)
            cur.execute("PRAGMA synchronous = NORMAL")
            # The log goes back into the file on a thread of its own (core.storage.checkpoints),
            # not in whichever commit takes it past SQLite's mark.
            cur.execute("PRAGMA wal_autocheckpoint = 0")
            cur.execute("PRAGMA foreign_keys = ON")
            cur.execute("PRAGMA secure_delete = ON")
            cur.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            # A transaction that reads then writes must start IMMEDIATE: deferred, it would fail
            # at once with "database is locked" when another connection wrote in between (a
            # WAL snapshot cannot be upgraded); IMMEDIATE waits its turn for the write lock.
            # Plain reads stay deferred so they never wait for a writer.
            # On the DBAPI connection itself: SQLAlchemy's statement machinery cost more than
            # a short read transaction's query.
            conn.info.pop(_READ, None)
            raw = conn.connection.driver_connection
            if conn.get_execution_options().get("elora_immediate", False):
                self._take_writer(conn)
                self._begin_immediate(raw)
            else:
                raw.execute("BEGIN")

        @event.listens_for(engine, "before_cursor_execute")
        def _on_execute(conn, _cursor, statement, _params, _context, _many):
            if self._holds(conn) or _CONTROL.match(statement):
                return
            if not _WRITE.match(statement):
                conn.info[_READ] = True
                return
            if conn.info.get(_READ) and conn.in_transaction():
                message = (
                    "a deferred transaction wrote after reading; open it with "
                    f"session(write=True): {statement.strip()[:80]}"
                )
                if self.strict_writes:
                    raise WriteAfterRead(message)
                log.warning(message)
            self._take_writer(conn)

        @event.listens_for(engine, "commit")
        def _on_commit(conn):
            self._end(conn, commit=True)

        @event.listens_for(engine, "rollback")
        def _on_rollback(conn):
            self._end(conn, commit=False)

        @event.listens_for(engine, "checkin")
        def _on_checkin(_dbapi_conn, record):
            # Whatever ended the connection's use, its writer turn ends with it.
            if record is not None and self._holder is record:
                self._give_writer()

        return self._migrated(engine)

    def _migrated(self, engine: Engine) -> Engine:
        try:
            # Opening the store is not news that the database is writable again: hooks (the
            # spool replay) wait for a write of the process's own work, so a read-only
            # command (doctor, a forget preview) never races a replay it did not ask for.
            self._opening = True
            with engine.connect() as conn:
                migrate(conn)
        except OperationalError as exc:
            engine.dispose()
            raise StorageUnavailable(f"database {self.safe_url}: {exc.orig}") from exc
        finally:
            self._opening = False
        return engine

    # -- the writer turn ------------------------------------------------------------------

    def _take_writer(self, conn) -> None:
        """Wait for this process's writer turn for `conn` (failing only when the turn did not
        change hands for the whole busy timeout)."""
        me = threading.get_ident()
        if self._writer_thread == me:
            # This thread already writes on another connection: waiting for ourselves would
            # never end, so SQLite's own lock decides (and names the nesting if it times out).
            log.debug("nested write transaction on a second connection")
            return
        if not self.writer.acquire(timeout=max(self.busy_timeout_ms / 1000, 0.001)):
            raise OperationalError(
                "BEGIN", (), sqlite3.OperationalError("database is locked (writer queue)")
            )
        self._writer_thread = me
        self._holder = conn.connection._connection_record

    def _holds(self, conn) -> bool:
        return self._holder is not None and self._holder is conn.connection._connection_record

    def _give_writer(self) -> None:
        self._holder = None
        self._writer_thread = None
        self.writer.release()

    def _end(self, conn, commit: bool) -> None:
        """Finish the transaction on the DBAPI connection now, then hand the writer turn on.

        SQLAlchemy fires these events before its own COMMIT/ROLLBACK; doing it here first lets
        the next writer in as soon as the data is on disk (the later call finds no open
        transaction and does nothing)."""
        if not self._holds(conn):
            return
        raw = conn.connection.dbapi_connection
        try:
            if raw is not None and raw.in_transaction:
                raw.commit() if commit else raw.rollback()
        except sqlite3.Error:
            return  # SQLAlchemy's own call raises it properly; the turn ends at check-in
        self._give_writer()
        if commit:
            checkpoints = self._checkpoints  # (close() may drop it meanwhile)
            if checkpoints is not None:
                checkpoints.wrote()
            self._after_write()

    def _begin_immediate(self, raw: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, retried with backoff when SQLite says busy before the timeout
        (it does so at once in a few cases, such as a WAL recovery in another process)."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        pause = 0.005
        while True:
            try:
                raw.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() + pause >= deadline:
                    raise OperationalError("BEGIN IMMEDIATE", (), exc) from exc
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def on_write(self, hook: Callable[[], None]) -> None:
        """Call `hook()` after each committed write of this process (e.g. a spool replay)."""
        self._replay_hooks.append(hook)

    def _after_write(self) -> None:
        if self._opening:
            return
        for hook in self._replay_hooks:
            try:
                hook()
            except Exception:  # a hook must never fail the write that triggered it
                log.exception("post-write hook failed")

    # -- sessions -------------------------------------------------------------------------

    @contextmanager
    def session(self, write: bool = False) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error.

        `write=True` for read-modify-write work: the write lock is taken at BEGIN.
        """
        engine = self.engine.execution_options(elora_immediate=True) if write else self.engine
        with self._unavailable(), Session(engine) as session:
            yield session
            session.commit()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A pooled connection for raw SQL reads, in one deferred transaction that ends like a
        session's. No ORM session: building and committing one costs about as much as a
        short read itself, and recall makes dozens of them per question."""
        with self._unavailable(), self.engine.connect() as conn:
            yield conn
            conn.commit()

    @contextmanager
    def _unavailable(self) -> Iterator[None]:
        """Errors that mean the database cannot be used, as StorageUnavailable."""
        try:
            yield
        except DBAPIError as exc:
            if is_unavailable(exc):
                raise StorageUnavailable(f"database unavailable: {exc.orig}") from exc
            raise
        except Exception as exc:
            # psycopg's own errors, from the DBAPI cursor the archive writes through directly
            # (e.g. a lock timeout on a table another process locked).
            if postgres.sqlstate(exc) is not None and is_unavailable(exc):
                raise StorageUnavailable(f"database unavailable: {exc}") from exc
            raise

    def write(self, fn: Callable[[Session], T], attempts: int = 3) -> T:
        """`fn(session)` in a write transaction, run again when SQLite said busy early (or
        PostgreSQL chose it as a deadlock's victim).

        For the write paths that must not be lost (captures, traces): a busy answer that came
        before the busy timeout ran out is a transient race, not an unavailable database."""
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                with self.session(write=True) as session:
                    return fn(session)
            except StorageUnavailable as exc:
                waited = time.monotonic() - started
                early = waited < self.busy_timeout_ms / 1000 / 2
                if not (early and is_busy(exc.__cause__ or exc)) or attempt == attempts - 1:
                    raise
                time.sleep(0.01 * 2**attempt)
            except Exception as exc:  # PostgreSQL: a deadlock or serialisation failure
                if postgres.sqlstate(exc) not in postgres.RETRY_CODES or attempt == attempts - 1:
                    raise
                time.sleep(0.01 * 2**attempt)
        raise AssertionError("unreachable")

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Every row of one raw SQL query (`?` placeholders), in its own short transaction."""
        with self.reading() as conn:
            return list(conn.execute(qmark(sql, params)).all())

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
            # SQLite makes a checkpoint give up at once (busy, the log left as it is) while
            # another runs: never beside this process's checkpoint thread, and a few tries
            # while another process's runs. Readers and writers are waited for (busy_timeout).
            for attempt in range(TRUNCATE_TRIES):
                with self._checkpoints.turn() if self._checkpoints else nullcontext():
                    busy = raw.driver_connection.execute(
                        "PRAGMA wal_checkpoint(TRUNCATE)"
                    ).fetchone()[0]
                if not busy:
                    return
                time.sleep(0.05 * (attempt + 1))
            log.warning("WAL not truncated: another checkpoint kept it busy")
        finally:
            raw.close()

    def close(self) -> None:
        """Dispose of every pooled connection, then checkpoint what the log still holds."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self._checkpoints is not None:
            self._checkpoints.close()
            self._checkpoints = None


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
    if conn.dialect.name == "sqlite":  # `?` is SQLite's own mark: no statement to build
        return conn.exec_driver_sql(sql, tuple(_driver_value(v) for v in params))
    return conn.execute(qmark(sql, params))


def _driver_value(value: Any) -> Any:
    """A parameter as SQLite stores it through statement(): datetimes in SQLAlchemy's text
    form, dicts and lists as JSON text."""
    if isinstance(value, datetime):
        return db_time(value)
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


def run_many(conn: Connection, sql: str, rows: list[tuple]) -> None:
    """Execute raw SQL written with `?` placeholders once per row of parameters."""
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(sql, [tuple(_driver_value(v) for v in row) for row in rows])
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
    return statement(*named_marks(sql, params))


def named_marks(sql: str, params: Sequence[Any], prefix: str = "q") -> tuple[str, dict[str, Any]]:
    """`sql` with its `?` marks (outside quotes) as named parameters `:<prefix>N`, and their
    values: text() SQL for either database (colons in literals are escaped)."""
    out, values, quote = [], {}, None
    for char in sql:
        if quote:
            quote = None if char == quote else quote
            if char == ":":  # a colon in a literal is no parameter
                char = "\\:"
        elif char in "'\"":
            quote = char
        elif char == "?":
            name = f"{prefix}{len(values)}"
            values[name] = params[len(values)]
            out.append(f":{name}")
            continue
        out.append(char)
    if len(values) != len(params):
        raise ValueError(f"{len(params)} parameters for {len(values)} placeholders: {sql[:80]}")
    return "".join(out), values


def _set_wal(cur: sqlite3.Cursor, timeout: float) -> None:
    """Put the file in WAL mode, waiting up to `timeout` seconds for its turn: a new file's
    first switch to WAL is refused at once (no busy handler) while another process makes the
    same switch, as processes opening a new home together do."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)  # the other opener's switch takes a few milliseconds
            pause = min(pause * 2, 0.1)


def db_time(value) -> str | None:
    """A datetime in the exact text form SQLAlchemy uses for SQLite, so raw and ORM rows agree."""
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S.%f")


def from_db_time(value):
    """A datetime read back from SQLite (text or datetime), as a naive UTC datetime."""
    from datetime import datetime

    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
