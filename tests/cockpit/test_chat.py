"""The chat screen: the real pipeline against the local model server, with the evidence pack and
the routing trace shown beside the answer."""

from __future__ import annotations

import threading

from textual.widgets import Input, RichLog

from cockpit.app import Cockpit
from tests.cockpit.support import entry, pane_text, settle, wait_until
from tests.core.learning.support import extraction
from tests.llm_server import Reply, tool

QUESTION = "Does Camille like coriander?"


def _log(app) -> str:
    return "\n".join(line.text for line in app.screen.query_one(RichLog).lines)


async def test_a_message_gets_an_answer_with_its_evidence_and_routing(
    make_services, llm, monkeypatch
):
    # FLASH is a model LiteLLM has a price for, so the escalated call has a known cost.
    monkeypatch.setenv("ELORA_MODEL_FLASH", "openai/gpt-4o-mini")
    services = make_services()
    services.memory.save(entry("pref.coriander", "Camille dislikes coriander", kind="preference"))
    escalate = tool("new_cognitive_level", target_model="FLASH",
                    transfer_plan="## Goal\nAnswer from the preference in the pack.")  # fmt: skip
    llm.enqueue("fake-lite", Reply(tool_calls=[escalate]))
    llm.enqueue("gpt-4o-mini", Reply(text="No: Camille dislikes coriander.", prompt_tokens=400))
    app = Cockpit(services, refresh_seconds=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        assert app.focused is app.screen.query_one("#chat-input", Input)
        await pilot.press(*QUESTION, "enter")
        await settle(pilot)

        log = _log(app)
        side = pane_text(app.screen.query_one("#chat-trace"))

    assert [r["model"] for r in llm.requests] == ["fake-lite", "gpt-4o-mini"]
    assert f"you {QUESTION}" in log
    assert "elora No: Camille dislikes coriander." in log
    # Routing: tiers, escalation, tokens and cost.
    assert "start LITE → final FLASH · answered" in side
    assert "escalated LITE → FLASH" in side
    assert "tokens 450 in / 20 out" in side
    cost = services.traces.recent(1)[0].cost
    assert cost and cost > 0 and f"cost ${cost:.5f}" in side
    # Evidence pack: layers, items with their tier label, sources.
    assert "Evidence pack" in side and "L2 focused recall (1)" in side
    assert "[personalized:preference] Camille dislikes coriander" in side
    assert "telegram 42 2025-03-13T08:00" in side
    # The same pipeline as every surface: captured, traced, remembered as a conversation.
    trace = services.traces.recent(1)[0]
    assert trace.surface == "cockpit" and trace.escalations[0]["to"] == "FLASH"
    assert services.archive.counts()["captures"] == 2


async def test_the_answer_shows_before_the_exchange_is_learned(make_services, llm, monkeypatch):
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "model")
    release, arrived = threading.Event(), threading.Event()
    llm.answer_when("worth remembering", extraction(), hold=release, arrived=arrived)
    llm.default_text = "Noted, Tuesday at 7."
    app = Cockpit(make_services(), refresh_seconds=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await pilot.press(*"My flight to Oslo leaves Tuesday at 7", "enter")
        try:
            # Learning waits on the model (its extraction call held): the answer is shown.
            await wait_until(
                pilot,
                lambda: arrived.is_set() and "elora Noted, Tuesday at 7." in _log(app),
                what="the answer shown while its exchange is being learned",
            )
            status = pane_text(app.screen.query_one("#chat-status"))
            assert "learning from this exchange" in status
        finally:
            release.set()
        await settle(pilot)
        assert pane_text(app.screen.query_one("#chat-status")).strip() == ""


async def test_a_provider_failure_is_an_honest_reply_not_a_crash(services, cockpit, llm):
    llm.enqueue("fake-lite", Reply(status=500))
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await pilot.press(*QUESTION, "enter")
        await settle(pilot)

        assert app.is_running
        assert "can't reach my language model" in _log(app)
        assert "provider_error" in pane_text(app.screen.query_one("#chat-trace"))
        assert pane_text(app.screen.query_one("#chat-status")).strip() == ""


async def test_digits_typed_in_the_chat_stay_in_the_message(services, cockpit, llm):
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await pilot.press(*"Room 4", "1")
        assert app.screen.query_one("#chat-input", Input).value == "Room 41"
        assert app.current_mode == "chat"

        await pilot.press("f4")  # F-keys switch screens even while typing
        assert app.current_mode == "traces"
