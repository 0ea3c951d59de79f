import json
import sqlite3
import threading
import uuid
from datetime import datetime

import pytest

from core.errors import StorageUnavailable
from core.storage.db import Database, WriteAfterRead, qmark, run

# SQLite itself: its files, PRAGMAs and FTS5 tables (tests/core/storage/test_postgres.py
# checks the same on PostgreSQL).
pytestmark = pytest.mark.sqlite_only


def test_every_connection_uses_wal_and_secure_delete(db):
    with db.engine.connect() as first, db.engine.connect() as second:
        for conn in (first, second):
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
            assert conn.exec_driver_sql("PRAGMA secure_delete").scalar_one() == 1
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1


def test_reads_keep_working_while_another_process_writes(db):
    writer = sqlite3.connect(db.path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO meta (key, value) VALUES ('k', 'uncommitted')")
        with db.session() as session:
            rows = session.connection().exec_driver_sql("SELECT count(*) FROM meta").scalar_one()
        assert rows == 0  # the reader sees the last committed state instead of waiting
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_writes_fail_as_storage_unavailable_while_database_is_locked(db):
    locker = sqlite3.connect(db.path, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StorageUnavailable), db.session() as session:
            session.connection().exec_driver_sql("INSERT INTO meta (key, value) VALUES ('k', 'v')")
    finally:
        locker.execute("ROLLBACK")
        locker.close()


def test_database_under_a_regular_file_is_unavailable_not_a_crash(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    db = Database(f"sqlite:///{blocker / 'elora.db'}")

    with pytest.raises(StorageUnavailable, match=r"file\.txt"), db.session():
        pass


def _hammer(db, writes: int, errors: list) -> None:
    """Read-modify-write transactions and single inserts, back to back."""
    try:
        for n in range(writes):
            with db.session(write=True) as session:
                conn = session.connection()
                count = conn.exec_driver_sql("SELECT count(*) FROM meta").scalar_one()
                for _ in range(20):  # a transaction that holds the write lock a little while
                    conn.exec_driver_sql(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        (uuid.uuid4().hex, str(count)),
                    )
            db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (uuid.uuid4().hex, str(n)))
    except Exception as exc:  # collected: the test shows every failure
        errors.append(exc)


def test_many_threads_writing_at_once_take_turns_instead_of_failing(tmp_path):
    # A busy timeout far above one transaction's length, far below what a thread waits when
    # SQLite's own polling lets the others overtake it again and again.
    db = Database(f"sqlite:///{tmp_path / 'elora.db'}", busy_timeout_ms=500)
    errors: list[Exception] = []
    threads = [threading.Thread(target=_hammer, args=(db, 30, errors)) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert db.rows("SELECT count(*) FROM meta")[0][0] == 16 * 30 * 21
    db.close()


def test_a_deferred_transaction_that_reads_then_writes_is_refused_in_tests(db):
    # In production it would fail with "database is locked" whenever another writer committed
    # between its read and its write; it must be opened with write=True.
    with pytest.raises(WriteAfterRead), db.session() as session:
        conn = session.connection()
        conn.exec_driver_sql("SELECT count(*) FROM meta").scalar_one()
        conn.exec_driver_sql("INSERT INTO meta (key, value) VALUES ('k', 'v')")


def test_opening_a_database_is_not_a_write_for_the_after_write_hooks(tmp_path):
    # Every process migrates when it opens the store; a read-only command (doctor, a forget
    # preview) must not start a spool replay that races what it reads.
    database = Database(f"sqlite:///{tmp_path / 'elora.db'}")
    writes = []
    database.on_write(lambda: writes.append("hook"))
    try:
        with database.session() as session:  # opens (creates and migrates) the file
            session.connection().exec_driver_sql("SELECT count(*) FROM meta").scalar_one()
        assert writes == []
        with database.session(write=True) as session:
            session.connection().exec_driver_sql("INSERT INTO meta (key, value) VALUES ('k', 'v')")
        assert writes == ["hook"]
    finally:
        database.close()


def _open_at_once(database: Database, start: threading.Barrier, failures: list) -> None:
    start.wait()
    try:
        database.engine  # noqa: B018 - creating the engine migrates the file
    except BaseException as exc:  # what the test reports
        failures.append(exc)


def test_processes_opening_a_new_home_together_each_wait_their_turn(tmp_path):
    # Several processes (bot, cockpit, a CLI command) started at once on a home that has no
    # database yet: each one's migration must wait for the others, not fail with "locked".
    for round_ in range(6):
        path = tmp_path / f"elora-{round_}.db"
        databases = [Database(f"sqlite:///{path}") for _ in range(4)]
        start = threading.Barrier(len(databases))
        failures: list[BaseException] = []
        threads = [
            threading.Thread(target=_open_at_once, args=(d, start, failures)) for d in databases
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        versions = [d.rows("SELECT count(*) FROM schema_migrations")[0][0] for d in databases]
        for database in databases:
            database.close()
        assert failures == [] and len(set(versions)) == 1, (round_, failures)


def test_raw_sql_stores_dates_and_json_as_the_portable_statements_do(db):
    # run() hands `?` SQL straight to SQLite; what it stores must not differ from the portable
    # statement() path (and from what the ORM reads back).
    moment = datetime(2025, 5, 17, 9, 30)  # no microseconds: isoformat() would drop them
    facts = {"lieu": ["Lyon", "é"], "n": 1}
    with db.session() as session:
        conn = session.connection()
        run(conn, "CREATE TEMP TABLE t (how TEXT, at TEXT, facts TEXT)")
        run(conn, "INSERT INTO t VALUES (?, ?, ?)", ("run", moment, facts))
        run(conn, "INSERT INTO t VALUES (?, ?, ?)", [("many", moment, ["x"]), ("none", None, 3)])
        conn.execute(qmark("INSERT INTO t VALUES (?, ?, ?)", ("statement", moment, facts)))
        rows = {r[0]: tuple(r[1:]) for r in run(conn, "SELECT how, at, facts FROM t").all()}
        literal = run(conn, "SELECT '?:x', ?", (7,)).one()

    assert rows["run"] == rows["statement"] == ("2025-05-17 09:30:00.000000", json.dumps(facts))
    assert rows["many"] == ("2025-05-17 09:30:00.000000", '["x"]')
    assert rows["none"] == (None, "3")
    assert tuple(literal) == ("?:x", 7)
