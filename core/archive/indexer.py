"""The background indexer: new chunks of every chat are embedded together, after the replies.

Each exchange hands over the ids of the chunks it created; one thread gathers whatever is
waiting from all chats and embeds it in one batch, so ten chats answering at once cost one
engine call and one vector upsert, not ten, and no reply ever waits for its own embedding.
Chunks stay `pending` in SQLite until their vectors are stored: a crash loses nothing, and the
index-pending job picks up whatever was left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.archive.store import Archive

log = logging.getLogger(__name__)

# Chunks embedded per round: one engine batch and one vector upsert.
ROUND = 128
# How long a round waits for more chunks before it starts: a vector upsert costs ~15 ms of
# Chroma work (holding the GIL) however few vectors it carries, and chunks arrive one or two
# per message; waiting a moment turns a burst's hundreds of upserts into a few dozen. A chunk
# stays searchable by its words meanwhile; drain() (wait_idle) cuts the wait short.
LINGER = 0.5


class Indexer:
    """Collects chunk ids from any thread; one worker thread embeds them in shared rounds."""

    def __init__(self, archive: Archive):
        self.archive = archive
        self._waiting: dict[str, None] = {}  # insertion-ordered set
        self._cond = threading.Condition()
        self._running = False
        self._hurry = 0  # callers waiting in wait_idle: no lingering for them
        self._closed = False  # no round starts after close(): the chunks stay pending
        self.rounds = 0  # engine rounds run (read by tests and benches)

    def submit(self, chunk_ids: Iterable[str]) -> None:
        """Queue chunks for embedding and make sure the worker is on it."""
        with self._cond:
            for chunk_id in chunk_ids:
                self._waiting[chunk_id] = None
            if self._running:
                self._cond.notify_all()  # a lingering round may now be full
                return
            if not self._waiting or self._closed:
                return
            self._running = True
        threading.Thread(target=self._work, name="elora-indexer", daemon=True).start()

    def _work(self) -> None:
        batch: list[str] = []
        try:
            while True:
                with self._cond:
                    for chunk_id in batch:
                        self._waiting.pop(chunk_id, None)
                    self._linger()
                    batch = [] if self._closed else list(self._waiting)[:ROUND]
                    if not batch:  # decided under the lock: a submit now starts a new worker
                        self._running = False
                        self._cond.notify_all()
                        return
                self._index(batch)
                self.rounds += 1
        except BaseException:
            with self._cond:
                self._running = False
                self._cond.notify_all()
            raise

    def _linger(self) -> None:
        """Wait (lock held, released while waiting) for a fuller round, unless hurried."""
        deadline = time.monotonic() + LINGER
        while self._waiting and len(self._waiting) < ROUND and not (self._hurry or self._closed):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._cond.wait(remaining)

    def _index(self, batch: list[str]) -> None:
        try:
            self.archive.index_pending(chunk_ids=batch, batch_size=len(batch))
        except Exception as exc:  # the chunks stay pending for the index-pending job
            log.warning("background indexing failed (%d chunks stay pending): %s", len(batch), exc)

    def pending(self) -> int:
        """Chunks queued and not yet handled."""
        with self._cond:
            return len(self._waiting)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until everything queued so far is handled; False on timeout."""
        with self._cond:
            self._hurry += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: not self._running and not self._waiting, timeout)
            finally:
                self._hurry -= 1

    def close(self, timeout: float = 60.0) -> bool:
        """Start no more rounds and wait (at most `timeout` seconds) for the one under way, so
        nothing touches the database once its owner closes it; what is still queued stays
        pending for the index job. False when the round outlasted the timeout."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._running, timeout)
