"""Every job Elora knows, by name: plain async functions taking the services.

The scheduler only registers them (core.jobs.scheduler); `elora jobs run NAME` calls them
directly; each run's outcome and duration are logged and kept in the `meta` table.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.errors import NotFound
from core.offload import run_blocking
from core.storage import meta

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
    return await run_blocking(services.archive.replay_spool)


async def index_pending(services) -> dict:
    """Embed archive chunks and entries whose vectors are still missing (embedder was down)."""
    chunks = await run_blocking(services.archive.index_pending)
    entries = await run_blocking(services.memory.index)
    return {"chunks": chunks, "entries": entries}


async def purge_ephemeral(services) -> dict:
    """Drop session memory past its TTL."""
    return {"purged": await run_blocking(services.session_memory.purge_expired)}


async def promotion(services) -> dict:
    """Propose promotions: episodic → semantic, semantic → procedural."""
    from core.learning.promotion import promote

    return await promote(services)


async def reflexion(services) -> dict:
    """Read today's turns, detect corrections, count rule violations, propose lessons."""
    from core.learning.reflexion import reflect

    return await reflect(services)


async def environment(services) -> dict:
    """Propose environment predictions from recurring outcomes: messages and Elora's traces."""
    from core.learning.environment import observe

    return await observe(services)


async def fade(services) -> dict:
    """Count recalls from new traces, then archive episodic entries past their lifetime."""
    from core.memory.fading import fade_due

    return await run_blocking(fade_due, services)


async def profile_staleness(services) -> dict:
    """Report capability-profile dimensions not updated for 48 h (they read as dampened)."""
    stale = [p["dimension"] for p in services.profile.all() if p["stale"]]
    if stale:
        log.warning("capability profile stale for: %s", ", ".join(stale))
    return {"stale": stale}


async def fact_keys(services) -> dict:
    """With a model configured, index facts of archived conversations not read yet (a bounded
    number of LITE calls per run, under the spending cap)."""
    from core.archive.fact_keys import extract_fact_keys
    from core.routing.tiers import configured

    if not configured(services.settings):
        return {"skipped": "no model configured"}
    return await extract_fact_keys(services, services.llm, max_calls=FACT_KEY_CALLS)


FACT_KEY_CALLS = 20  # per run of the job: the backlog of a big import is read over many runs


async def markdown_export(services) -> dict:
    """Refresh the private Markdown mirror under ELORA_HOME/mirror."""
    from core.memory.mirror import export_markdown

    return await run_blocking(export_markdown, services, services.settings.mirror_dir)


async def purge_undo(services) -> dict:
    """Drop undo data past ELORA_UNDO_MINUTES: the log on disk, this process's held forgets."""
    from core.undo.log import purge_expired

    purged = await run_blocking(purge_expired, services)
    return {"purged": purged, "held_dropped": services.held_forgets.purge(services.clock.now())}


JOBS: dict[str, Job] = {
    job.name: job
    for job in (
        Job("replay-spool", "store spooled captures in the database", replay_spool, 5),
        Job(
            "index-pending",
            "embed chunks and entries still waiting for a vector",
            index_pending,
            15,
        ),
        Job("purge-ephemeral", "drop session memory past its TTL", purge_ephemeral, 30),
        Job("fact-keys", "index facts a model reads in archived conversations", fact_keys, 60),
        Job("purge-undo", "drop undo data past its period (ELORA_UNDO_MINUTES)", purge_undo, 5),
        Job(
            "promotion",
            "propose episodic→semantic and semantic→procedural promotions",
            promotion,
            24 * 60,
        ),
        Job(
            "reflexion",
            "detect corrections in today's turns and propose lessons",
            reflexion,
            24 * 60,
        ),
        Job(
            "environment",
            "propose environment predictions from recurring outcomes and Elora's own traces",
            environment,
            24 * 60,
        ),
        Job(
            "fade",
            "archive low-importance episodic entries past their lifetime (restorable)",
            fade,
            24 * 60,
        ),
        Job(
            "profile-staleness",
            "report stale capability-profile dimensions",
            profile_staleness,
            6 * 60,
        ),
        Job(
            "markdown-export",
            "refresh the Markdown mirror under ELORA_HOME/mirror",
            markdown_export,
            24 * 60,
        ),
    )
}


def get_job(name: str) -> Job:
    """The job called `name`, or NotFound listing the known ones."""
    try:
        return JOBS[name]
    except KeyError:
        raise NotFound(f"unknown job {name!r}; known jobs: {', '.join(JOBS)}") from None


def _remember_run(services, name: str, outcome: dict) -> None:
    meta.put(services.db, f"job:{name}", json.dumps(outcome, default=str))


def last_runs(services) -> dict[str, dict]:
    """The last recorded outcome of each job."""
    runs = meta.with_prefix(services.db, "job:")
    return {key[4:]: json.loads(value) for key, value in runs.items()}


async def run_job(services, name: str) -> dict:
    """Run one job, logging and recording its outcome and duration; errors are re-raised."""
    job = get_job(name)
    started = time.perf_counter()
    at = services.clock.now().isoformat()
    try:
        result = await job.fn(services)
    except Exception as exc:
        seconds = round(time.perf_counter() - started, 3)
        # One line by default (the CLI and the scheduler both report it); the traceback at DEBUG.
        log.error(
            "job %s failed after %.2fs: %s: %s", name, seconds, type(exc).__name__, exc,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )  # fmt: skip
        _remember_run(
            services, name, {"at": at, "ok": False, "seconds": seconds, "error": str(exc)[:300]}
        )
        raise
    seconds = round(time.perf_counter() - started, 3)
    log.info("job %s done in %.2fs: %s", name, seconds, result)
    _remember_run(services, name, {"at": at, "ok": True, "seconds": seconds, "result": result})
    return {"job": name, "seconds": seconds, **result}
