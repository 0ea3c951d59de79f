"""What the chat and council panes show at 100x30: each reply once, long lines wrapped inside
the pane (nothing cut off at its right edge)."""

from __future__ import annotations

from textual.widgets import RichLog

from tests.cockpit.support import pane_text, screen_text, settle, wait_until

SIZE = (100, 30)
QUESTION = "Does Camille like coriander?"
# Long enough to need several lines in a pane a little over half of 100 columns; each word is
# distinct so the test can tell which ones reached the screen.
LONG = " ".join(f"w{n:02d}ord" for n in range(40)) + " FINALWORD"


def _log_lines(app, selector: str) -> list[str]:
    return [line.text for line in app.screen.query_one(selector, RichLog).lines]


def _fits(app, selector: str) -> bool:
    log = app.screen.query_one(selector, RichLog)
    width = log.scrollable_content_region.width
    return all(len(line.text.rstrip()) <= width for line in log.lines)


async def _ask(app, pilot) -> None:
    await pilot.press("3")
    await settle(pilot)
    await pilot.press(*QUESTION, "enter")
    # The trace pane shows the routing only once the reply has been handled.
    await wait_until(
        pilot, lambda: "answered" in pane_text(app.screen.query_one("#chat-trace")),
        timeout=60, what="the reply's routing",
    )  # fmt: skip
    await settle(pilot)


async def test_a_reply_is_shown_once(cockpit, llm):
    llm.enqueue("fake-lite", "Non, Camille n'aime pas la coriandre.")
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _ask(app, pilot)
        lines = _log_lines(app, "#chat-log")

    assert [line for line in lines if line.startswith("elora")] == [
        "elora Non, Camille n'aime pas la coriandre."
    ]
    assert [line for line in lines if line.startswith("you")] == [f"you {QUESTION}"]


async def test_a_long_reply_wraps_inside_the_chat_pane(cockpit, llm):
    llm.enqueue("fake-lite", LONG)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _ask(app, pilot)
        fits = _fits(app, "#chat-log")
        shown = screen_text(app)

    assert fits
    assert all(word in shown for word in LONG.split())


async def test_a_long_contribution_wraps_inside_the_council_pane(cockpit, llm):
    for _ in range(6):  # two participants, three rounds
        llm.enqueue("fake-flash", LONG)
    llm.enqueue("fake-flash", "## Consensus\nYes.\n## Divergences\nNone.\n## Recommendations\nGo.")
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6")
        await settle(pilot)
        await pilot.press("space", "down", "space", "tab", *"Move to Lyon?", "enter")
        await wait_until(
            pilot, lambda: any("calls ·" in line for line in _log_lines(app, "#council-log")),
            timeout=60, what="the council's synthesis",
        )  # fmt: skip
        await settle(pilot)
        fits = _fits(app, "#council-log")
        log = app.screen.query_one("#council-log", RichLog)
        log.scroll_home(animate=False)
        await pilot.pause()
        shown = screen_text(app)

    assert fits
    assert "FINALWORD" in shown and "w39ord" in shown


async def test_every_screen_runs_one_refresh_timer(cockpit):
    # The same cause as the double reply: a handler calling super()'s ran the base one twice.
    app = cockpit(refresh_seconds=600)
    async with app.run_test(size=SIZE) as pilot:
        counts = {}
        for key, mode in enumerate(("proposals", "memory", "chat", "traces", "health"), 1):
            await pilot.press(f"f{key}")  # F-keys: the chat's input would take digits
            await settle(pilot)
            assert app.current_mode == mode
            screen = app.screen
            ticks = [t for t in screen._timers if t._callback == screen._tick]
            counts[mode] = len(ticks)

    assert counts == {"proposals": 1, "memory": 1, "chat": 0, "traces": 1, "health": 1}
