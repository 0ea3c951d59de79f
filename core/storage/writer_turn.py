"""The writer turn of one process: first come, first served, and patient while the line moves.

A plain `threading.Lock` lets the thread that just released it take it again before any
woken waiter runs, so one busy writer can keep the others out for as long as it keeps
writing; they then fail with "database is locked" although nothing was wrong. Here a release
hands the turn to the oldest waiter, and a waiter only gives up when the turn has not changed
hands for the whole timeout (a stuck holder), however long the line ahead of it was.
"""

from __future__ import annotations

import threading
import time
from collections import deque


class WriterTurn:
    """A FIFO lock whose `acquire(timeout)` measures the timeout from the last hand-off."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: deque[threading.Lock] = deque()
        self._held = False
        self._handoffs = 0  # grows each time the turn changes hands

    def acquire(self, timeout: float) -> bool:
        """Wait for the turn; False when no one got it for `timeout` seconds in a row."""
        with self._mutex:
            if not self._held and not self._waiters:
                self._held = True
                self._handoffs += 1
                return True
            ticket = threading.Lock()
            ticket.acquire()
            self._waiters.append(ticket)
            seen = self._handoffs
        deadline = time.monotonic() + timeout
        while True:
            if ticket.acquire(timeout=max(deadline - time.monotonic(), 0)):
                return True  # release() handed the turn to this ticket
            with self._mutex:
                if self._handoffs != seen:  # the line moved: keep waiting, a full timeout again
                    seen = self._handoffs
                    deadline = time.monotonic() + timeout
                    continue
                try:
                    self._waiters.remove(ticket)
                except ValueError:
                    return True  # handed over just as the wait ran out
                return False

    def release(self) -> None:
        with self._mutex:
            if not self._held:
                raise RuntimeError("release of a writer turn nobody holds")
            self._handoffs += 1
            if self._waiters:
                self._waiters.popleft().release()  # still held: by the oldest waiter now
            else:
                self._held = False

    def locked(self) -> bool:
        with self._mutex:
            return self._held
