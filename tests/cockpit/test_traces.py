"""The traces screen: recent requests (classification, models, escalations, latency, cost) and
a sparkline of requests and spend per day."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import DataTable, Sparkline

from tests.cockpit.support import NOW, pane_text, screen_text, settle, table_keys

CALLS = [
    {"tier": "LITE", "model": "openai/fake-lite", "tokens_in": 50, "tokens_out": 10,
     "cost": 0.001, "latency_ms": 120},
    {"tier": "FLASH", "model": "openai/fake-flash", "tokens_in": 400, "tokens_out": 80,
     "cost": 0.009, "latency_ms": 900},
]  # fmt: skip


def _seed(services, clock) -> None:
    """Three requests: two days ago, and two today (one escalated, one failed)."""
    record = services.traces.record
    clock.moment = NOW - timedelta(days=2)
    record(id="t-old", surface="telegram", chat_id="42", classification={"intent": "chitchat"},
           models=CALLS[:1], tokens_in=50, tokens_out=10, cost=0.001, latency_ms=300)  # fmt: skip
    clock.moment = NOW - timedelta(hours=1)
    record(id="t-esc", surface="cockpit", chat_id="cockpit", latency_ms=1500, cost=0.01,
           classification={"intent": "question-about-past", "memory_need": "L2"},
           models=CALLS, escalations=[{"from": "LITE", "to": "FLASH", "plan_chars": 80}],
           tool_calls=[{"name": "search_memory", "tier": "LITE", "ok": True, "error": None}],
           tokens_in=450, tokens_out=90, pack={"items": ["pref.coriander"], "used": 40})  # fmt: skip
    clock.moment = NOW
    record(id="t-fail", surface="telegram", chat_id="42", classification={"intent": "task"},
           error="provider_error", latency_ms=30000)  # fmt: skip


async def test_recent_requests_with_classification_models_escalations_latency_cost(
    services, clock, cockpit
):
    _seed(services, clock)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        table = app.screen.query_one(DataTable)

        assert table_keys(table) == ["t-fail", "t-esc", "t-old"]  # newest first
        assert table.get_row("t-esc") == [
            "03-14 08:30", "cockpit", "question-about-past", "LITE→FLASH", "1500", "0.01000"
        ]  # fmt: skip
        assert table.get_row("t-fail")[3:] == ["-", "30000", "?"]


async def test_the_highlighted_trace_is_detailed(services, clock, cockpit):
    _seed(services, clock)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("down")  # t-esc
        await settle(pilot)
        detail = pane_text(app.screen.query_one("#trace-body"))

    assert "t-esc · cockpit · chat cockpit · 2025-03-14 08:30:00" in detail
    assert "'memory_need': 'L2'" in detail
    assert "pack: 1 items, 40 tokens" in detail
    assert "call FLASH openai/fake-flash: 400/80 tokens, 900 ms" in detail
    assert "escalation LITE → FLASH" in detail
    assert "tool search_memory: ok" in detail


async def test_sparklines_plot_requests_and_spend_per_day(services, clock, cockpit):
    _seed(services, clock)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        requests = app.screen.query_one("#requests-chart", Sparkline).data
        spend = app.screen.query_one("#spend-chart", Sparkline).data
        text = screen_text(app)

    assert len(requests) == 14
    assert requests[-3:] == [1, 0, 2]  # two days ago, yesterday, today
    assert spend[-3:] == [0.001, 0.0, 0.01]
    assert "requests / day (14 d): 3 in all" in text
    assert "spend / day (14 d): $0.0110 in all" in text


async def test_models_are_the_escalation_path_not_every_call(services, clock, cockpit):
    # The gate started at FLASH; the classifier's and learning's LITE calls are no escalation.
    services.traces.record(id="t-gate", surface="telegram", chat_id="42", cost=0.0092,
                           models=[CALLS[0], CALLS[1], CALLS[0]], pack={"start_tier": "FLASH"},
                           classification={"intent": "task"})  # fmt: skip
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await settle(pilot)

        assert app.screen.query_one(DataTable).get_row("t-gate")[3:] == ["FLASH", "0", "0.00920"]
