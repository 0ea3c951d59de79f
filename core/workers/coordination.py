"""Coordination of several bot workers on one PostgreSQL, apart from Telegram itself:
`Listener` wakes a worker when another stores or finishes an update (LISTEN/NOTIFY on the
queue's channel), `Leadership` elects the one worker that polls Telegram (a session-level
advisory lock, released by the server when its holder dies)."""

from __future__ import annotations

import logging
import threading

from core.storage.postgres import POLLER, try_session_lock
from core.workers.updates import channel

log = logging.getLogger(__name__)

LOOK_EVERY = 1.0  # seconds between looks for notifications


class Listener:
    """A thread LISTENing on the queue's channel; calls `wake()` for each notification."""

    def __init__(self, services, wake):
        self.services = services
        self.wake = wake
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="elora-listen", daemon=True)

    def start(self) -> None:
        """Start listening."""
        self._thread.start()

    def stop(self) -> None:
        """Stop listening (within a second)."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as exc:  # the server went away: look again in a while
                log.debug("notification listener: %s", exc)
                self._stop.wait(LOOK_EVERY)

    def _listen(self) -> None:
        engine = self.services.db.engine
        with engine.connect() as conn:
            name = channel(conn)
            raw = conn.connection.driver_connection
            conn.commit()
            raw.autocommit = True
            try:
                raw.execute(f"LISTEN {name}")
                while not self._stop.is_set():
                    for _ in raw.notifies(timeout=LOOK_EVERY, stop_after=1):
                        self.wake()
            finally:
                raw.execute(f"UNLISTEN {name}")
                raw.autocommit = False


class Leadership:
    """Who polls Telegram: the worker holding the poller's advisory lock."""

    def __init__(self, services):
        self.services = services
        self._conn = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free (never waits); keeps the session that holds it."""
        conn = self.services.db.engine.connect()
        try:
            held = try_session_lock(conn, POLLER)
            conn.commit()
        except Exception:
            conn.close()
            raise
        if not held:
            conn.close()
            return False
        self._conn = conn
        return True

    def still_held(self) -> bool:
        """Whether the session holding the lock is alive (a dead one has released it)."""
        if self._conn is None:
            return False
        try:
            self._conn.exec_driver_sql("SELECT 1").all()
            self._conn.commit()
            return True
        except Exception as exc:
            log.warning("lost the poller's lock: %s", exc)
            self.release()
            return False

    def release(self) -> None:
        """Give the lock up (closing the session releases it)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()  # the session ends: the server drops its advisory locks
            finally:
                conn.close()
