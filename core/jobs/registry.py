"""Every job Elora knows, by name, with a one-line description."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.errors import NotFound

log = logging.getLogger(__name__)

JobFn = Callable[[Any], Awaitable[dict]]


@dataclass(frozen=True)
class Job:
    """A named job and how often the scheduler runs it."""

    name: str
    description: str
    fn: JobFn
    every_minutes: int


async def replay_spool(services) -> dict:
    """Replay captures that waited in the spool while the database was unwritable."""
    return await asyncio.to_thread(services.archive.replay_spool)


async def index_pending(services) -> dict:
    """Embed archive chunks whose vectors are still missing (embedder was down)."""
    return {"indexed": await asyncio.to_thread(services.archive.index_pending)}


JOBS: dict[str, Job] = {
    job.name: job
    for job in (
        Job("replay-spool", "store spooled captures in the database", replay_spool, 5),
        Job("index-pending", "embed archive chunks still waiting for a vector", index_pending, 15),
    )
}


def get_job(name: str) -> Job:
    """The job called `name`, or NotFound listing the known ones."""
    try:
        return JOBS[name]
    except KeyError:
        raise NotFound(f"unknown job {name!r}; known jobs: {', '.join(JOBS)}") from None


async def run_job(services, name: str) -> dict:
    """Run one job, logging its outcome and duration; errors are reported, not hidden."""
    job = get_job(name)
    started = time.perf_counter()
    try:
        result = await job.fn(services)
    except Exception:
        log.exception("job %s failed after %.2fs", name, time.perf_counter() - started)
        raise
    log.info("job %s done in %.2fs: %s", name, time.perf_counter() - started, result)
    return {"job": name, "seconds": round(time.perf_counter() - started, 3), **result}
