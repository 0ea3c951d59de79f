"""Register every job with APScheduler (in the bot or cockpit process); each run is claimed
first (core/jobs/claims.py), so several processes on one database run a job once."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from core.errors import StorageUnavailable
from core.jobs.claims import claim_run
from core.jobs.registry import JOBS, run_job
from core.workers.updates import worker_name

log = logging.getLogger(__name__)


async def _safe(services, name: str, minutes: float = 0, worker: str = "") -> None:
    """A failing job is logged and recorded; it never stops the scheduler or the others.
    A run another process claimed already is skipped."""
    try:
        if not await asyncio.to_thread(claim_run, services, name, minutes, worker):
            log.debug("job %s already ran elsewhere this interval", name)
            return
    except StorageUnavailable as exc:
        log.warning("job %s not claimed (database unavailable): %s", name, exc)
        return
    try:
        await run_job(services, name)
    except Exception:  # run_job logged it (traceback at DEBUG) and recorded it in last runs
        log.debug("job %s failed; the next run will try again", name)


def start_scheduler(services, **overrides: Any):
    """An AsyncIOScheduler with every job registered at its interval, started."""
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    scheduler = AsyncIOScheduler(timezone="UTC")
    worker = worker_name()
    for job in JOBS.values():
        minutes = overrides.get(job.name, job.every_minutes)
        scheduler.add_job(
            _safe,
            "interval",
            minutes=minutes,
            args=[services, job.name, minutes, worker],
            id=job.name,
            name=job.description,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=60,
        )
    scheduler.start()
    return scheduler
