"""Scheduled runs happen once across processes: every scheduler fires every job, only the one
that claims the run runs it (the bot workers and the cockpit on one database)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from core.jobs import registry
from core.jobs.claims import claim_run, last_claims
from core.jobs.scheduler import _safe
from core.services import Services
from tests.core.learning.support import FixedClock


@pytest.fixture
def processes(settings, embedder):
    """Three schedulers' services on one home (each its own engine), sharing a clock."""
    clock = FixedClock()
    opened = [Services(settings, embedder=embedder, clock=clock) for _ in range(3)]
    yield opened, clock
    for svc in opened:
        svc.close()


@pytest.fixture
def counted_job(monkeypatch):
    """A job that counts its runs."""
    runs: list[str] = []

    async def count(svc):
        runs.append("run")
        return {"runs": len(runs)}

    monkeypatch.setitem(registry.JOBS, "count", registry.Job("count", "counts", count, 60))
    return runs


async def test_schedulers_firing_together_run_the_job_once(processes, counted_job):
    (a, b, c), _ = processes

    await asyncio.gather(
        *(_safe(svc, "count", 60, f"worker-{i}") for i, svc in enumerate((a, b, c)))
    )

    assert counted_job == ["run"]
    assert last_claims(a)["count"][1] in {"worker-0", "worker-1", "worker-2"}


async def test_the_next_interval_runs_again_and_a_late_scheduler_skips(processes, counted_job):
    (a, b, _), clock = processes
    await _safe(a, "count", 60, "a")

    clock.advance(minutes=30)
    await _safe(b, "count", 60, "b")  # fired half an interval later: a already ran it
    clock.advance(minutes=31)
    await _safe(b, "count", 60, "b")  # the next interval: due again

    assert counted_job == ["run", "run"]
    assert last_claims(a)["count"][1] == "b"


def test_threads_racing_for_one_run_let_exactly_one_through(processes):
    (a, b, c), _ = processes
    wins: list[str] = []
    start = threading.Barrier(6)

    def claim(svc, name):
        start.wait()
        if claim_run(svc, "race", 10, name):
            wins.append(name)

    threads = [threading.Thread(target=claim, args=(svc, f"{i}-{n}"))
               for i, svc in enumerate((a, b, c)) for n in range(2)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert len(wins) == 1
