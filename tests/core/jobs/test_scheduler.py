"""Jobs are plain async functions taking the services; the scheduler only registers them; each
run's outcome and duration are kept; a failing job never stops the others."""

from __future__ import annotations

import inspect
import json

import pytest

from core.cli.main import main
from core.jobs import registry
from core.jobs.registry import JOBS, get_job, last_runs, run_job
from core.jobs.scheduler import _safe, start_scheduler
from core.services import Services
from tests.core.learning.support import FixedClock, entry

EXPECTED = {"replay-spool", "index-pending", "purge-ephemeral", "purge-undo", "promotion", "reflexion",
            "profile-staleness", "markdown-export"}  # fmt: skip


@pytest.fixture
def services(settings, embedder):
    svc = Services(settings, embedder=embedder, clock=FixedClock())
    yield svc
    svc.close()


def break_the_mirror(services) -> None:
    """Put a plain file where the Markdown mirror's folder should be."""
    services.settings.home.mkdir(parents=True, exist_ok=True)
    services.settings.mirror_dir.write_text("not a folder")


def test_every_job_is_a_plain_async_function_of_the_services():
    assert set(JOBS) >= EXPECTED
    for job in JOBS.values():
        assert inspect.iscoroutinefunction(job.fn)
        assert list(inspect.signature(job.fn).parameters) == ["services"]
        assert job.every_minutes > 0 and job.description


async def test_the_scheduler_registers_every_job_at_its_interval(services):
    scheduler = start_scheduler(services, reflexion=60)
    try:
        jobs = {j.id: j for j in scheduler.get_jobs()}
        assert set(jobs) == set(JOBS)
        assert scheduler.running
        for name, job in jobs.items():
            minutes = 60 if name == "reflexion" else JOBS[name].every_minutes
            assert job.trigger.interval.total_seconds() == minutes * 60
            assert job.func is _safe and job.args[:3] == (services, name, minutes)
            assert job.max_instances == 1
    finally:
        scheduler.shutdown(wait=False)


async def test_a_run_records_its_outcome_and_duration(services):
    services.memory.save(entry("fact.standup", "The standup is at 9:45", observations=5,
                               confidence=0.95))  # fmt: skip

    outcome = await run_job(services, "promotion")

    assert outcome["job"] == "promotion" and outcome["semantic_to_procedural"] == 1
    record = last_runs(services)["promotion"]
    assert record["ok"] is True and record["seconds"] >= 0
    assert record["at"] == services.clock.now().isoformat()
    assert record["result"]["semantic_to_procedural"] == 1


async def test_a_failing_job_is_recorded_and_does_not_stop_the_next_one(services):
    break_the_mirror(services)

    await _safe(services, "markdown-export")
    await _safe(services, "profile-staleness")

    runs = last_runs(services)
    assert runs["markdown-export"]["ok"] is False and runs["markdown-export"]["error"]
    assert runs["profile-staleness"]["ok"] is True
    assert runs["profile-staleness"]["result"] == {"stale": []}


async def test_run_job_reraises_so_a_one_shot_run_can_report_the_failure(services):
    break_the_mirror(services)

    with pytest.raises(OSError):
        await run_job(services, "markdown-export")

    assert last_runs(services)["markdown-export"]["ok"] is False


def test_an_unknown_job_names_the_known_ones():
    from core.errors import NotFound

    with pytest.raises(NotFound, match="markdown-export"):
        get_job("compaction")


async def test_every_job_runs_on_an_empty_home(services):
    for name in JOBS:
        outcome = await run_job(services, name)
        assert outcome["job"] == name

    assert set(last_runs(services)) == set(JOBS)
    assert all(r["ok"] for r in last_runs(services).values())


def test_elora_jobs_run_then_list_shows_the_last_run(home, capsys):
    assert main(["jobs", "run", "profile-staleness", "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ran["job"] == "profile-staleness" and ran["stale"] == []

    assert main(["jobs", "list", "--json"]) == 0

    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["profile-staleness"]["last_run"]["ok"] is True
    assert rows["reflexion"]["last_run"] is None


def test_elora_jobs_run_reports_a_failing_job_clearly_and_records_it(home, capsys):
    home.mkdir(parents=True, exist_ok=True)
    (home / "mirror").write_text("not a folder")

    code = main(["jobs", "run", "markdown-export"])

    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("elora: job markdown-export failed: ")
    assert main(["jobs", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["markdown-export"]["last_run"]["ok"] is False


async def test_a_job_raising_is_logged_by_the_wrapper_not_raised(services, monkeypatch, caplog):
    async def explode(svc):
        raise RuntimeError("boom")

    monkeypatch.setitem(
        registry.JOBS, "explode", registry.Job("explode", "always fails", explode, 1)
    )

    await _safe(services, "explode")

    run = last_runs(services)["explode"]
    assert run.pop("seconds") >= 0
    assert run == {"at": services.clock.now().isoformat(), "ok": False, "error": "boom"}
    assert "explode failed" in caplog.text
