"""Register every job with APScheduler (in the bot or cockpit process)."""

from __future__ import annotations

import logging
from typing import Any

from core.jobs.registry import JOBS, run_job

log = logging.getLogger(__name__)


async def _safe(services, name: str) -> None:
    """A failing job is logged and recorded; it never stops the scheduler or the others."""
    try:
        await run_job(services, name)
    except Exception:  # run_job logged it (traceback at DEBUG) and recorded it in last runs
        log.debug("job %s failed; the next run will try again", name)


def start_scheduler(services, **overrides: Any):
    """An AsyncIOScheduler with every job registered at its interval, started."""
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    scheduler = AsyncIOScheduler(timezone="UTC")
    for job in JOBS.values():
        minutes = overrides.get(job.name, job.every_minutes)
        scheduler.add_job(
            _safe,
            "interval",
            minutes=minutes,
            args=[services, job.name],
            id=job.name,
            name=job.description,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=60,
        )
    scheduler.start()
    return scheduler
