"""PostgreSQL (`postgresql+psycopg://…`): the engine, the write turn, what "unavailable" means.

Several processes (bot workers, the cockpit, the CLI) share one server. Reads never wait:
each statement sees what was committed before it (READ COMMITTED). A read-modify-write
transaction (`Database.session(write=True)`) takes a transaction-level advisory lock first,
so such transactions run one at a time across every process, exactly as SQLite's BEGIN
IMMEDIATE makes them; the lock is released at commit or rollback, also when a process dies
(the server ends its session). Writes that need no such turn (blind inserts, the update
queue's row claims with SKIP LOCKED) run concurrently. Waiting for any lock stops after the
busy timeout (`lock_timeout`), which turns into StorageUnavailable like a locked SQLite file.

Advisory lock keys are two integers: a purpose and the home, a hash of the schema the
connection works in, so that two homes in two schemas of one database never wait for each
other.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError

from core.errors import ConfigError

log = logging.getLogger(__name__)

# Purposes of advisory locks (the first key); the second key is the home's.
WRITE_TURN = 1
MIGRATIONS = 2
POLLER = 3
JOB = 4

# SQLSTATE classes and codes that mean "the server cannot take this now", not a bug:
# 08 connection exception, 53 insufficient resources (disk full, too many connections),
# 57 operator intervention (shutdown, starting up), 55P03 lock not available (lock_timeout),
# 25006 read-only transaction (a standby), 58 system error (I/O).
_UNAVAILABLE_CLASSES = ("08", "53", "57", "58")
_UNAVAILABLE_CODES = ("55P03", "25006")
# Worth running again at once: deadlock detected, serialization failure.
RETRY_CODES = ("40P01", "40001")


def is_postgres(url: str) -> bool:
    """Whether a database URL names PostgreSQL."""
    return url.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a psycopg error (wrapped by SQLAlchemy or not), or None."""
    orig = getattr(exc, "orig", exc)
    return getattr(orig, "sqlstate", None)


def is_unavailable(exc: BaseException) -> bool:
    """True when a PostgreSQL error means the server cannot be used right now."""
    if not isinstance(exc, DBAPIError) and sqlstate(exc) is None:
        return False
    code = sqlstate(exc)
    if code is None:  # no SQLSTATE at all: the connection failed before the server spoke
        return (isinstance(exc, DBAPIError) and exc.connection_invalidated) or _no_server(exc)
    return code[:2] in _UNAVAILABLE_CLASSES or code in _UNAVAILABLE_CODES


def _no_server(exc: BaseException) -> bool:
    import psycopg

    return isinstance(getattr(exc, "orig", exc), psycopg.OperationalError)


def home_key(schema: str) -> int:
    """The second advisory-lock key: this home (a schema), as a signed 32-bit integer."""
    value = zlib.crc32(f"elora:{schema}".encode())
    return value - 2**32 if value >= 2**31 else value


def create(url: str, busy_timeout_ms: int) -> Engine:
    """An engine for a PostgreSQL URL: a small pool checked before use, lock waits bounded."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise ConfigError(
            "ELORA_DATABASE_URL: PostgreSQL needs psycopg: pip install 'elora[postgres]'"
        ) from None
    engine = create_engine(
        url,
        pool_pre_ping=True,  # a restarted server or a dropped connection is replaced, not used
        pool_size=8,
        max_overflow=24,
        pool_timeout=busy_timeout_ms / 1000,
        connect_args={"connect_timeout": max(2, int(busy_timeout_ms / 1000))},
    )
    lock_ms = int(busy_timeout_ms)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, record):
        with dbapi_conn.cursor() as cur:
            cur.execute(f"SET lock_timeout = {lock_ms}")
            cur.execute("SET TIME ZONE 'UTC'")
            cur.execute("SELECT current_schema()")
            record.info["elora_home_key"] = home_key(cur.fetchone()[0] or "public")
        dbapi_conn.commit()

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _on_execute(conn, cursor, sql, parameters, context, executemany):
        if context is not None and context.compiled is None and "?" in sql:
            first = parameters[0] if executemany and parameters else parameters
            if isinstance(first, tuple | list) and first:
                sql = driver_marks(sql)
        return sql, parameters

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection):
        if conn.get_execution_options().get("elora_immediate", False):
            # The write turn: read-modify-write transactions one at a time, in every process.
            conn.exec_driver_sql(
                "SELECT pg_advisory_xact_lock(%s, %s)", (WRITE_TURN, connection_key(conn))
            )

    return engine


def driver_marks(sql: str) -> str:
    """Raw SQL written with SQLite's `?` placeholders as psycopg wants it: `%s` for each mark
    outside quotes, `%` doubled. Statements an owner module runs with exec_driver_sql and
    positional parameters (core/archive/turns.py, core/recall/*) then serve both databases."""
    out, quote = [], None
    for char in sql:
        if char == "%":
            out.append("%%")
            continue
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append(char)
    return "".join(out)


def connection_key(conn: Connection) -> int:
    """The home key of a connection (its schema's hash)."""
    return conn.connection._connection_record.info["elora_home_key"]


@contextmanager
def session_lock(conn: Connection, purpose: int) -> Iterator[None]:
    """Hold a session-level advisory lock (waiting for it) while the block runs."""
    key = connection_key(conn)
    conn.exec_driver_sql("SELECT pg_advisory_lock(%s, %s)", (purpose, key))
    try:
        yield
    finally:
        conn.exec_driver_sql("SELECT pg_advisory_unlock(%s, %s)", (purpose, key))


def try_session_lock(conn: Connection, purpose: int) -> bool:
    """Take a session-level advisory lock if nobody holds it; never waits."""
    row = conn.exec_driver_sql(
        "SELECT pg_try_advisory_lock(%s, %s)", (purpose, connection_key(conn))
    ).first()
    return bool(row and row[0])


def vacuum(engine: Engine, tables: list[str], wait_seconds: float = 10.0) -> None:
    """VACUUM tables after forgetting, so the erased rows' old versions leave the data files
    (a plain VACUUM makes their space reusable; FULL rewrites each table without them).

    VACUUM FULL still copies a deleted row that some snapshot might see, and its own snapshot
    counts: a snapshot's horizon is the oldest transaction running on the whole server, in any
    database. So it first waits, up to `wait_seconds`, until no transaction begun before the
    forget runs anywhere and no session of this database holds an older snapshot."""
    import time

    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        horizon = conn.exec_driver_sql("SELECT txid_current()").scalar_one()
        deadline = time.monotonic() + wait_seconds
        while _older_than(conn, horizon):
            if time.monotonic() >= deadline:
                log.warning("forget: a long transaction may keep erased rows until the next VACUUM")
                break
            time.sleep(0.05)
        for table in tables:
            conn.exec_driver_sql(f"VACUUM (FULL) {table}")


def _older_than(conn: Connection, horizon: int) -> bool:
    """Whether a transaction older than `horizon` (a 64-bit transaction id) still runs on the
    server, or a session of this database holds a snapshot taken before it. Both ages are
    counted from the same transaction id within one statement, so they compare exactly."""
    return bool(
        conn.exec_driver_sql(
            "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint < %(h)s OR EXISTS ("
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND age(backend_xmin) > age(%(x)s::text::xid))",
            {"h": horizon, "x": str(horizon % 2**32)},
        ).scalar_one()
    )
