"""The WAL checkpoint, off the request path (SQLite).

SQLite copies its write-ahead log back into the database file in the commit that takes the log
past 1,000 pages: that commit (a capture, a trace) then takes tens of milliseconds more, with
the process's writer turn held. So every connection opens with that automatic checkpoint off
(`wal_autocheckpoint = 0`, core.storage.db) and a thread of the process does it instead: after
a committed write, at most once per PAUSE, on a connection of its own. PASSIVE: it neither
waits for nor blocks readers and writers. Closing the database checkpoints what is left, so a
one-shot command leaves the log as short as SQLite's own checkpoint would have.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

PAUSE = 1.0  # seconds between two checkpoints while writes go on


class Checkpointer:
    """Checkpoints one database file's log after this process's writes."""

    def __init__(self, path: Path):
        self.path = path
        self._wrote = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self.runs = 0  # checkpoints done (read by tests)

    def wrote(self) -> None:
        """A write of this process committed: its pages go to the file within PAUSE."""
        if self._closed.is_set():
            return
        self._wrote.set()
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._closed.is_set():
                    self._thread = threading.Thread(
                        target=self._loop, name="elora-checkpoint", daemon=True
                    )
                    self._thread.start()

    def _loop(self) -> None:
        while not self._closed.is_set():
            self._wrote.wait()
            self._wrote.clear()
            if self._closed.is_set():
                return
            self.checkpoint()
            self._closed.wait(PAUSE)  # the writes meanwhile wait for the next one

    def turn(self) -> threading.Lock:
        """Held while a checkpoint runs: another checkpoint of the process (TRUNCATE after a
        forget) takes it too, or SQLite would let the later of the two give up."""
        return self._lock

    def checkpoint(self) -> None:
        """Copy the log's committed pages into the database file (PASSIVE)."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = sqlite3.connect(
                        self.path, isolation_level=None, check_same_thread=False
                    )
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.runs += 1
            except sqlite3.Error as exc:  # the next write asks again
                log.warning("WAL checkpoint failed: %s", exc)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread, then checkpoint what is left and close its connection."""
        self._closed.set()
        self._wrote.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is not None:
            self.checkpoint()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
