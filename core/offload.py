"""Blocking work off the event loop: the one helper every async caller uses.

SQLite, Chroma and file work block; on a surface's event loop they would stall every other
chat. `run_blocking` runs such a call on a process-wide pool of threads, with the caller's
context variables (so the request's model-call log still sees it). Embedding has its own
single thread (core/embedding_worker.py) and SQLite writes take turns (core/storage/db.py),
so the pool is sized for waiting on I/O and locks, not for CPU. `WorkSlots` bounds how many
requests do local work at once, without bounding how many wait on their models.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# Threads mostly wait (SQLite's lock, Chroma, disk); a request holds one at a time.
WORKERS = 16
# Parts of one request run side by side (recall's searches: SQLite and Chroma release the GIL,
# and the machine has two cores), on pools of their own: one for the parts a request starts,
# one for the parts those start in turn (an archive search's anchors). A part waits only for
# parts of the next level, so no pool ever waits for itself; a third level runs in place.
SIDE_WORKERS = 4
SIDE_LEVELS = 2

_pool: ThreadPoolExecutor | None = None
_side: list[ThreadPoolExecutor] = []
_pool_lock = threading.Lock()
_in_side = threading.local()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="elora-io")
    return _pool


def beside(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Start `fn(*args, **kwargs)` on another thread, in the caller's context, while the caller
    goes on; its `result()` returns or raises as the call did. Below SIDE_LEVELS of such calls
    inside one another, the call runs at once on the caller's thread."""
    level = getattr(_in_side, "level", 0)
    if level >= SIDE_LEVELS:
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to whoever asks for the result
            done.set_exception(exc)
        return done
    if len(_side) <= level:
        with _pool_lock:
            while len(_side) <= level:
                _side.append(
                    ThreadPoolExecutor(SIDE_WORKERS, thread_name_prefix=f"elora-side{len(_side)}")
                )
    context = contextvars.copy_context()

    def call() -> T:
        _in_side.level = level + 1
        return context.run(fn, *args, **kwargs)

    return _side[level].submit(call)


async def run_blocking(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Await `fn(*args, **kwargs)` run on the blocking-work pool, in the caller's context."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(_executor(), call)


class WorkSlots:
    """At most `size` requests doing local work at once; waiting on a model frees the slot.

    Recall, storage and embedding compete for two cores: a few requests at a time finish
    sooner than many sharing them. Waiting on a model uses no core, so a request gives its slot
    back meanwhile and model calls of many chats overlap. Coming back from the model, it goes
    before any request that has not started, so work in progress finishes first.
    """

    def __init__(self, size: int):
        self.size = size
        self.busy = 0
        self._resuming: deque[asyncio.Future] = deque()
        self._starting: deque[asyncio.Future] = deque()

    async def _acquire(self, resuming: bool) -> None:
        if self.busy < self.size and not self._resuming and (resuming or not self._starting):
            self.busy += 1
            return
        future = asyncio.get_running_loop().create_future()
        (self._resuming if resuming else self._starting).append(future)
        try:
            await future  # the releasing side counted us in
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # granted and cancelled at once: hand it on
            raise

    def _release(self) -> None:
        self.busy -= 1
        while self.busy < self.size and (self._resuming or self._starting):
            future = (self._resuming or self._starting).popleft()
            if not future.done():
                self.busy += 1
                future.set_result(None)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot for one request; waits inside it run through `waiting_elsewhere`."""
        await self._acquire(resuming=False)
        held = [True]  # lent out and back by waiting_elsewhere
        token = _SLOTS.set((self, held))
        try:
            yield
        finally:
            _SLOTS.reset(token)
            if held[0]:
                self._release()


_SLOTS: contextvars.ContextVar[tuple[WorkSlots, list[bool]] | None] = contextvars.ContextVar(
    "elora_work_slots", default=None
)


@contextlib.asynccontextmanager
async def waiting_elsewhere() -> AsyncIterator[None]:
    """Around a wait on something remote (a model): the caller's work slot, if it holds one,
    is lent out meanwhile and taken back, ahead of new requests, afterwards."""
    current = _SLOTS.get()
    if current is None or not current[1][0]:
        yield
        return
    slots, held = current
    slots._release()
    held[0] = False
    try:
        yield
    finally:
        await slots._acquire(resuming=True)
        held[0] = True
