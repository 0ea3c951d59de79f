"""Work on the whole home: import exports, learn from the archive, run jobs, rebuild the
vectors, the Markdown mirror, the council and its skills."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.council.council import DEFAULT_ROUNDS

if TYPE_CHECKING:
    from core.council.skills import Skill
    from core.importers.runner import ImportPlan, ImportReport
    from core.jobs.registry import Job
    from core.services import Services
    from core.storage.rebuild import RebuildReport


def prepare_import(
    paths: list[str], fmt: str = "auto", me: str | None = None, skip_too_long: bool = False
) -> ImportPlan:
    """Read and check exports before anything is stored (ImportFormatError otherwise)."""
    from core.importers.runner import prepare

    return prepare(paths, fmt, me, skip_too_long=skip_too_long)


def run_import(
    services: Services, plan: ImportPlan, on_progress: Callable[[int], None] | None = None
) -> ImportReport:
    """Archive prepared exports (a rerun resumes where an interrupted one stopped)."""
    from core.importers.runner import run

    return run(services, plan, on_progress=on_progress)


def count_unlearned(services: Services, chat_id: str | None, since: datetime | None) -> int:
    """How many archived messages may still be learned from."""
    from core.learning.backfill import count_pending

    return count_pending(services, chat_id, since)


async def learn(
    services: Services,
    chat_id: str | None = None,
    since: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Extraction over the archived messages not yet learned from; proposals, never writes."""
    from core.learning.backfill import learn_archive

    return await learn_archive(services, chat_id, since, on_progress=on_progress)


async def index_facts(services: Services) -> dict[str, Any]:
    """Have the model read archived conversations not yet read for facts, and index what it
    finds as keys of their messages (core.archive.fact_keys)."""
    from core.archive.fact_keys import extract_fact_keys

    return await extract_fact_keys(services, services.llm)


def jobs(services: Services) -> list[tuple[Job, dict[str, Any] | None]]:
    """Every scheduled job with its last recorded run."""
    from core.jobs.registry import JOBS, last_runs

    runs = last_runs(services)
    return [(job, runs.get(name)) for name, job in JOBS.items()]


def get_job(name: str) -> Job:
    """The job called `name`, or NotFound listing the known ones."""
    from core.jobs.registry import get_job as find

    return find(name)


async def run_job(services: Services, name: str) -> dict[str, Any]:
    """Run one job now (its outcome is recorded); its errors are raised."""
    from core.jobs.registry import run_job as run

    return await run(services, name)


def reindex(
    services: Services, say: Callable[[str], None] | None = None, progress=None
) -> RebuildReport:
    """Rebuild every vector from SQLite with the configured embedder; `say` gets a line per
    notable step, `progress(label, total, unit)` a context manager yielding `advance(n)`."""
    from core.storage.rebuild import rebuild_vectors

    options = {"say": say, "progress": progress}
    return rebuild_vectors(services, **{k: v for k, v in options.items() if v is not None})


def migrate_store(
    services: Services, target_url: str, rebuild: bool = False, say: Callable[[str], None] = print
) -> Any:
    """Copy this home's database into an empty one at `target_url` and check every table's
    row count (core.storage.transfer); with `rebuild`, embed everything again into the
    configured vector store from the copy. The report (TransferReport)."""
    from core.services import Services as Home
    from core.storage.db import Database
    from core.storage.rebuild import rebuild_vectors
    from core.storage.transfer import copy_database

    backlog = services.spool.backlog()
    if backlog:
        say(f"note: {backlog} spooled capture(s) are not in the database yet: run "
            "`elora jobs run replay-spool` first to move them too")  # fmt: skip
    target = Database(target_url, services.settings.db_busy_timeout_ms)
    try:
        report = copy_database(services.db, target)
    finally:
        target.close()
    if rebuild and report.verified:
        moved = Home(services.settings.model_copy(update={"database_url": target_url}))
        try:
            rebuilt = rebuild_vectors(moved, say=say)
        finally:
            moved.close()
        report.vectors = "rebuilt" if rebuilt.complete else "incomplete"
        report.vector_report = rebuilt.to_json()
    return report


def export_mirror(services: Services, directory: Path) -> dict[str, Any]:
    """Write a private Markdown snapshot of memory (never changes the database)."""
    from core.memory.mirror import export_markdown

    return export_markdown(services, directory)


def import_mirror(services: Services, directory: Path) -> dict[str, Any]:
    """Edits made in a Markdown mirror, filed as proposals (no direct writes)."""
    from core.memory.mirror import import_markdown

    return import_markdown(services, directory)


async def council(
    services: Services,
    question: str,
    skills: list[str] | str,
    rounds: int = DEFAULT_ROUNDS,
    *,
    surface: str = "cli",
    chat_id: str | None = None,
    on_round: Callable[[int, dict[str, Any]], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Convene 2-5 expert skills for Delphi rounds, then a synthesis; the transcript."""
    from core.council.council import consult_council

    return await consult_council(services, question, skills, rounds, surface=surface,
                                 chat_id=chat_id, on_round=on_round)  # fmt: skip


def list_skills(services: Services) -> list[Skill]:
    """The expert skills of this home."""
    from core.council.skills import list_skills as listing

    return listing(services)


def get_skill(services: Services, skill_id: str) -> Skill:
    """One skill (NotFound otherwise)."""
    from core.council.skills import get_skill as find

    return find(services, skill_id)


def forge_skill(
    services: Services, skill_id: str, name: str, description: str, instructions: str
) -> Skill:
    """Create or update a skill."""
    from core.council.skills import forge_skill as forge

    return forge(services, skill_id, name, description, instructions)
