"""Replaying the spool as soon as the database takes writes again.

The scheduled replay job runs every five minutes; a process that spooled something should not
leave its archive incomplete for that long. Two triggers replay sooner: the next successful
write of this process (the database is evidently back), and a short retry timer armed when
something was spooled (for when nothing else writes), backing off while the lock lasts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.errors import EloraError

if TYPE_CHECKING:
    from core.archive.spool import Spool

log = logging.getLogger(__name__)

FIRST_RETRY = 1.0  # seconds after spooling
MAX_RETRY = 30.0


class SpoolReplayer:
    """Knows whether this home's spool may hold something; replays it in a background thread."""

    def __init__(self, spool: Spool, replay: Callable[[], dict[str, int]]):
        self.spool = spool
        self.replay = replay  # the archive's replay: captures and traces, then indexing
        self._lock = threading.Lock()
        self._armed: bool | None = None  # None: not looked at the spool directory yet
        self._running = False
        self._again = False
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def spooled(self) -> None:
        """Something was just spooled: replay once the database is back."""
        with self._lock:
            self._armed = True
            if self._timer is None or not self._timer.is_alive():
                self._timer = threading.Thread(
                    target=self._retry, name="elora-spool-retry", daemon=True
                )
                self._timer.start()

    def poke(self) -> None:
        """A write just succeeded: if anything waits in the spool, replay it now."""
        if self.spool.in_replay():  # the replay's own writes
            return
        with self._lock:
            if self._armed is None:  # first write of this process: look once
                self._armed = bool(self.spool.files())
            if not self._armed:
                return
            if self._running:
                self._again = True
                return
            self._running = True
        threading.Thread(target=self._replay_loop, name="elora-spool-replay", daemon=True).start()

    def _retry(self) -> None:
        delay = FIRST_RETRY
        while not self._stop.wait(delay):
            with self._lock:
                if not self._armed:
                    return
            self.poke()
            delay = min(delay * 2, MAX_RETRY)

    def _replay_loop(self) -> None:
        try:
            while True:
                with self._lock:
                    self._again = False
                self.replay_now()
                with self._lock:
                    if not self._again or not self._armed:
                        return
        finally:
            with self._lock:
                self._running = False

    def replay_now(self) -> bool:
        """Replay the spool in this thread; True when it is empty afterwards."""
        try:
            report = self.replay()
        except EloraError as exc:  # still unwritable: the timer tries again
            log.info("spool replay deferred: %s", exc)
            return False
        empty = not self.spool.files()
        with self._lock:
            self._armed = not empty
        if report["lines"]:
            log.warning(
                "spool replayed: %d captures and %d traces stored (%d lines)",
                report["stored"], report["traces"], report["lines"],
            )  # fmt: skip
        return empty

    def close(self) -> None:
        """Stop the retry timer (a replay already running finishes)."""
        self._stop.set()
