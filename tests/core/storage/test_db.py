import sqlite3

import pytest

from core.errors import StorageUnavailable
from core.storage.db import Database

# SQLite itself: its files, PRAGMAs and FTS5 tables (tests/core/storage/test_postgres.py
# checks the same on PostgreSQL).
pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def db(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'elora.db'}", busy_timeout_ms=50)
    with database.session():  # create and migrate the file
        pass
    yield database
    database.close()


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
