"""The writer turn of one process: free for whoever comes while the line is short, served in
arrival order once a waiter has waited too long, and patient while the line moves.

With a plain `threading.Lock`, the thread that just released the turn usually takes it again
before a woken waiter runs, so one busy writer could keep the others out for as long as it
kept writing; they then failed with "database is locked" although nothing was wrong. Handing
the turn to the oldest waiter at every release cures that but costs throughput: the waiter
must first get the GIL back from the releasing thread, and nobody writes meanwhile. So the
turn goes to whoever asks first while nobody has waited FAIR_AFTER, and only to the oldest
waiter after that; and a waiter gives up only when the turn has not changed hands for the whole
timeout (a stuck holder), however long the line ahead of it was.
"""

from __future__ import annotations

import threading
import time
from collections import deque

FAIR_AFTER = 0.05  # seconds a waiter may be overtaken before the turn waits for it


class WriterTurn:
    """A lock whose `acquire(timeout)` times out only when the turn stops changing hands."""

    def __init__(self, fair_after: float = FAIR_AFTER) -> None:
        self.fair_after = fair_after
        self._changed = threading.Condition(threading.Lock())
        self._waiters: deque[tuple[object, float]] = deque()  # (ticket, when it began waiting)
        self._held = False
        self._handoffs = 0  # grows each time someone takes the turn

    def acquire(self, timeout: float) -> bool:
        """Wait for the turn; False when no one took it for `timeout` seconds in a row."""
        with self._changed:
            now = time.monotonic()
            if not self._held and not self._overdue(now):
                return self._take()
            ticket = object()
            self._waiters.append((ticket, now))
            seen, deadline = self._handoffs, now + timeout
            try:
                while True:
                    now = time.monotonic()
                    if not self._held and (self._waiters[0][0] is ticket or not self._overdue(now)):
                        return self._take()
                    if now >= deadline:
                        if self._handoffs == seen:
                            return False
                        seen, deadline = self._handoffs, now + timeout  # the line moved
                    # Woken by a release; or, while others overtake it, when it becomes overdue.
                    self._changed.wait(min(deadline - now, max(self.fair_after, 0.001)))
            finally:
                self._waiters.remove(next(w for w in self._waiters if w[0] is ticket))

    def release(self) -> None:
        with self._changed:
            if not self._held:
                raise RuntimeError("release of a writer turn nobody holds")
            self._held = False
            self._changed.notify_all()

    def locked(self) -> bool:
        with self._changed:
            return self._held

    def _take(self) -> bool:
        self._held = True
        self._handoffs += 1
        return True

    def _overdue(self, now: float) -> bool:
        """Whether the oldest waiter has waited long enough to be served first."""
        return bool(self._waiters) and now - self._waiters[0][1] >= self.fair_after
