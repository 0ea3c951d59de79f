import shutil
import sqlite3

import pytest

from core.storage.db import Database
from tests.waiting import wait_until

# SQLite's write-ahead log, copied back into the file by a thread of the process instead of in
# the commit that crosses SQLite's mark (core.storage.checkpoints).
pytestmark = pytest.mark.sqlite_only


def _write(db: Database, rows: int, prefix: str = "k") -> None:
    with db.session(write=True) as session:
        conn = session.connection()
        for n in range(rows):
            conn.exec_driver_sql(
                "INSERT INTO meta (key, value) VALUES (?, ?)", (f"{prefix}{n}", "x" * 2000)
            )


def _rows_in_the_file_itself(db: Database, tmp_path) -> int:
    """The rows of `meta` the database file holds without its log (a copy of the file alone)."""
    alone = tmp_path / "alone.db"
    shutil.copyfile(db.path, alone)
    conn = sqlite3.connect(alone)
    try:
        return conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'k%'").fetchone()[0]
    except sqlite3.DatabaseError:  # copied while a checkpoint was writing it
        return -1
    finally:
        conn.close()


def test_no_connection_checkpoints_in_its_own_commit(db):
    with db.engine.connect() as first, db.engine.connect() as second:
        for conn in (first, second):
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one() == 0


def test_written_pages_reach_the_file_after_the_write(db, tmp_path):
    # Kept open by another reader, the log is never folded back by a last connection closing:
    # only the process's checkpoint brings the rows into the file.
    reader = sqlite3.connect(db.path)
    try:
        before = db._checkpoints.runs
        _write(db, 1500)  # ~3,000 pages: past SQLite's 1,000-page mark

        wait_until(lambda: db._checkpoints.runs > before, "a checkpoint", 30)
        wait_until(
            lambda: _rows_in_the_file_itself(db, tmp_path) == 1500, "the rows in the file", 30
        )
    finally:
        reader.close()


def test_closing_checkpoints_what_the_log_still_holds(db, tmp_path):
    reader = sqlite3.connect(db.path)
    try:
        _write(db, 200)
        db.close()  # at once: the thread may not have had its turn yet

        assert _rows_in_the_file_itself(db, tmp_path) == 200
        _write(db, 50, prefix="k-again-")  # reopened: checkpointed again after its writes
        db.close()
        assert _rows_in_the_file_itself(db, tmp_path) == 250
    finally:
        reader.close()


def test_truncating_the_log_waits_for_the_checkpoint_thread(db, monkeypatch):
    # Two checkpoints at once: SQLite lets the later give up, and a forget would leave the log
    # (and what it erased) on disk. The TRUNCATE takes the thread's turn.
    from contextlib import contextmanager

    _write(db, 50)
    taken = []
    turn = db._checkpoints.turn

    @contextmanager
    def recorded():
        with turn():
            taken.append("in")
            yield
            taken.append("out")

    monkeypatch.setattr(db._checkpoints, "turn", recorded)

    db.checkpoint()

    assert taken == ["in", "out"]
    wal = db.path.with_name(db.path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
