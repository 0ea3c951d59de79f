"""Blocking work off the event loop: the one helper every async caller uses.

SQLite, Chroma and file work block; on a surface's event loop they would stall every other
chat. `run_blocking` runs such a call on a process-wide pool of threads, with the caller's
context variables (so the request's model-call log still sees it). Embedding has its own
single thread (core/embedding_worker.py) and SQLite writes take turns (core/storage/db.py),
so the pool is sized for waiting on I/O and locks, not for CPU.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# Threads mostly wait (SQLite's lock, Chroma, disk); a request holds one at a time.
WORKERS = 16

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="elora-io")
    return _pool


async def run_blocking(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Await `fn(*args, **kwargs)` run on the blocking-work pool, in the caller's context."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(_executor(), call)
