"""The council screen: pick skills, ask, watch each round arrive, then read the synthesis."""

from __future__ import annotations

import asyncio
import faulthandler
import threading

from textual.widgets import Input, RichLog, SelectionList

from tests.cockpit.support import notifications, settle, wait_until

QUESTION = "Should Camille move to Lyon?"
SYNTHESIS = "## Consensus\nMove in spring.\n## Divergences\nCost.\n## Recommendations\nVisit first."


def _log(app) -> str:
    return "\n".join(line.text for line in app.screen.query_one(RichLog).lines)


async def _pick_two_skills_and_ask(app, pilot) -> list[str]:
    await pilot.press("6")
    await settle(pilot)
    skills = app.screen.query_one(SelectionList)
    assert app.focused is skills
    await pilot.press("space", "down", "space", "tab")
    assert app.focused is app.screen.query_one("#council-question", Input)
    await pilot.press(*QUESTION, "enter")
    return list(skills.selected)


def _hold_round_two(llm, monkeypatch) -> threading.Event:
    """Make the model server hold the council's third call (round 2) until the event is set."""
    release = threading.Event()
    answer = llm._complete

    def held_after_round_one(body):
        if body.get("model") == "fake-flash" and len(llm.requests_for("fake-flash")) >= 2:
            release.wait(timeout=60)
        return answer(body)

    monkeypatch.setattr(llm, "_complete", held_after_round_one)
    return release


async def test_rounds_appear_as_they_finish_then_the_synthesis(services, cockpit, llm, monkeypatch):
    release = _hold_round_two(llm, monkeypatch)
    for _ in range(6):  # two participants, three rounds
        llm.enqueue("fake-flash", "Lyon is cheaper and closer to family.")
    llm.enqueue("fake-flash", SYNTHESIS)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        chosen = await _pick_two_skills_and_ask(app, pilot)
        assert chosen == ["devils-advocate", "financial-analyst"]

        # The first model call of a run imports LiteLLM: allow for a slow machine.
        await wait_until(pilot, lambda: "Round 1" in _log(app), timeout=60, what="round 1")
        log = _log(app)
        assert "Participant 1 (Devil's advocate): Lyon is cheaper" in log
        assert "Participant 2 (Financial analyst): Lyon is cheaper" in log
        assert "Round 2" not in log and "Synthesis" not in log  # still deliberating

        release.set()
        await settle(pilot)
        log = _log(app)

    assert log.index("Round 1") < log.index("Round 2") < log.index("Round 3")
    assert log.index("Round 3") < log.index("Synthesis") < log.index("Move in spring.")
    assert "7 calls" in log
    trace = services.traces.recent(1)[0]
    assert trace.surface == "council"
    assert trace.classification["participants"] == ["devils-advocate", "financial-analyst"]


async def test_a_council_of_one_is_refused_with_the_skills_to_choose_from(services, cockpit, llm):
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("6")
        await settle(pilot)
        await pilot.press("space", "tab", *QUESTION, "enter")
        await settle(pilot)

        errors = notifications(app, "error")
        assert len(errors) == 1 and "A council needs 2 to 5 distinct skills" in errors[0]
        assert "financial-analyst" in errors[0]
        assert app.is_running
    assert llm.requests == []


async def test_quitting_while_the_council_sits_leaves_nothing_waiting(
    services, cockpit, llm, monkeypatch
):
    # If quitting leaves a thread waiting forever, exiting hangs (the UI loop joins its worker
    # threads): this watchdog ends the run (exit status 1) rather than let the suite hang.
    faulthandler.dump_traceback_later(180, exit=True)
    release = _hold_round_two(llm, monkeypatch)
    app = cockpit()
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await _pick_two_skills_and_ask(app, pilot)
            await wait_until(pilot, lambda: "Round 1" in _log(app), timeout=60, what="round 1")
            await pilot.press("ctrl+q")  # quit mid-council (q would type into the question)
        assert not app.loop_runner.thread.is_alive()
        # No worker thread is left waiting on the stopped core loop: the process can exit.
        await asyncio.get_running_loop().shutdown_default_executor()
    finally:
        release.set()
        faulthandler.cancel_dump_traceback_later()
