"""The health screen: spool backlog, embedder status, jobs, store sizes, capability profile
with staleness, and today's spend against the cap."""

from __future__ import annotations

import asyncio

from cockpit.app import Cockpit
from core.archive.records import CaptureIn
from core.jobs.registry import _remember_run, run_job
from tests.cockpit.support import (
    NOW,
    add_capture,
    add_proposal,
    entry,
    pane_text,
    settle,
    wait_until,
)
from tests.fakes import BrokenEmbedder


async def _health(app, pilot) -> str:
    await pilot.press("5")
    await settle(pilot)
    return pane_text(app.screen.query_one("#health-body"), width=120)


def _row(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if f"│ {label} " in line)


async def test_shows_backlog_stores_jobs_profile_and_spend(make_services, clock, monkeypatch, llm):
    monkeypatch.setenv("ELORA_DAILY_SPEND_CAP", "0.05")
    services = make_services()
    add_capture(services, "Je n'aime pas la coriandre", message_id="1")
    services.memory.save(entry("pref.coriander", "Camille dislikes coriander", kind="preference"))
    add_proposal(services, "p-1", "Camille takes the train")
    services.traces.record(surface="telegram", chat_id="42", cost=0.02)
    await asyncio.to_thread(lambda: asyncio.run(run_job(services, "purge-ephemeral")))
    _remember_run(services, "promotion", {"at": "2025-03-14T03:00:00", "ok": False,
                                          "seconds": 0.4, "error": "database is locked"})  # fmt: skip
    services.profile.record("question-about-past", "up")
    clock.advance(hours=49)  # the profile has not moved for two days: stale
    services.traces.record(surface="telegram", chat_id="42", cost=0.01)
    # Captures still waiting in the spool (left by a process that found the database locked;
    # a write of this one would have replayed them, so they come after the writes above).
    for n in range(3):
        item = CaptureIn(surface="telegram", chat_id="42", text=f"spooled {n}", sent_at=NOW)
        services.spool.append(item, reason="database is locked")
    app = Cockpit(services, refresh_seconds=None)
    async with app.run_test(size=(120, 36)) as pilot:
        text = await _health(app, pilot)

    assert _row(text, "spool backlog").rstrip(" │").endswith("3")
    assert _row(text, "captures").rstrip(" │").endswith("1")
    assert _row(text, "memory entries").rstrip(" │").endswith("1")
    assert _row(text, "open proposals").rstrip(" │").endswith("1")
    assert "MB" in _row(text, "database size") and "MB" in _row(text, "vector store size")
    assert "local:multilingual-e5-small-q4 · ok" in _row(text, "embedder")
    # Today (after the clock moved) only the second trace counts.
    assert "$0.0100 of $0.05 cap" in _row(text, "spend today")
    purge = _row(text, "purge-ephemeral")
    assert "2025-03-14T09:30" in purge and "│ ok " in purge
    assert "failed: database is locked" in _row(text, "promotion")
    assert "never" in _row(text, "reflexion")
    dimension = _row(text, "question-about-past")
    assert "stale" in dimension and "fresh" not in dimension


async def test_reached_cap_and_a_failing_embedder_stand_out(settings, clock, monkeypatch, llm):
    from core.config import load_settings
    from core.services import Services

    monkeypatch.setenv("ELORA_DAILY_SPEND_CAP", "0.01")
    services = Services(load_settings(), clock=clock, embedder=BrokenEmbedder())
    services.traces.record(surface="telegram", chat_id="42", cost=0.02)
    app = Cockpit(services, refresh_seconds=None)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            text = await _health(app, pilot)
            assert app.is_running
    finally:
        services.close()

    assert "FAILING: embedding model unavailable (test)" in _row(text, "embedder")
    assert "cap reached" in _row(text, "spend today")
    assert "no feedback yet" in text


async def test_periodic_reloads_do_not_probe_the_embedder_again(settings, clock, llm):
    from core.config import load_settings
    from core.services import Services

    embedder = BrokenEmbedder()  # counts its calls
    services = Services(load_settings(), clock=clock, embedder=embedder)
    backlog, loads = services.spool.backlog, []
    services.spool.backlog = lambda: (loads.append(1), backlog())[1]
    app = Cockpit(services, refresh_seconds=0.1)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await _health(app, pilot)
            probes, shown = embedder.calls, len(loads)
            assert probes  # probed when shown
            # The cheap counts keep reloading; the embedder and vector store walk do not.
            await wait_until(pilot, lambda: len(loads) >= shown + 3, what="periodic reloads")
            await settle(pilot)
            assert embedder.calls == probes
            text = pane_text(app.screen.query_one("#health-body"), width=120)
            assert "FAILING" in _row(text, "embedder")  # the last probe, still shown

            await pilot.press("ctrl+r")  # an explicit refresh probes again
            await settle(pilot)
            assert embedder.calls == probes + 1
    finally:
        services.close()
