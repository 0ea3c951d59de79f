"""Beside a running bot: what the bot writes shows up in the cockpit without a restart
(periodically, on ctrl+r, when a screen is shown again), and what the cockpit decides the bot
reads at once. The "bot" here is a second Services object on the same home."""

from __future__ import annotations

from textual.widgets import DataTable

from cockpit.app import Cockpit
from tests.cockpit.support import add_proposal, entry, settle, table_keys, wait_until


def _keys(app) -> list[str]:
    return table_keys(app.screen.query_one(DataTable))


async def test_ctrl_r_shows_what_the_bot_proposed_meanwhile(services, make_services, cockpit):
    bot = make_services()
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert _keys(app) == []
        add_proposal(bot, "p-bot", "Camille prefers short replies")

        await pilot.press("ctrl+r")
        await settle(pilot)
        assert _keys(app) == ["p-bot"]


async def test_a_screen_shown_again_reloads(services, make_services, cockpit):
    bot = make_services()
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert _keys(app) == []
        bot.memory.save(entry("pref.short", "Camille prefers short replies", kind="preference"))
        add_proposal(bot, "p-bot", "Camille drinks green tea")

        await pilot.press("1")  # the proposals screen, shown again
        await settle(pilot)
        assert _keys(app) == ["p-bot"]
        await pilot.press("2")
        await settle(pilot)
        assert _keys(app) == ["pref.short"]


async def test_the_visible_screen_reloads_by_itself(services, make_services):
    bot = make_services()
    app = Cockpit(services, refresh_seconds=0.2)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        add_proposal(bot, "p-bot", "Camille prefers short replies")
        # No key pressed: the periodic reload finds it.
        await wait_until(pilot, lambda: _keys(app) == ["p-bot"], what="the bot's proposal")


async def test_a_periodic_reload_keeps_the_cursor_on_the_same_proposal(services, make_services):
    bot = make_services()
    for n in range(3):
        add_proposal(services, f"p-{n}", f"Proposal {n}", total=4.0 - n / 10)
    app = Cockpit(services, refresh_seconds=0.2)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")  # on p-2
        add_proposal(bot, "p-top", "A better proposal", total=4.1)  # lands above the cursor
        await wait_until(pilot, lambda: _keys(app)[0] == "p-top", what="the new proposal")
        table = app.screen.query_one(DataTable)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == "p-2"


async def test_the_bot_reads_what_the_cockpit_approved_without_restarting(
    services, make_services, cockpit
):
    bot = make_services()
    bot.memory.count()  # the bot is up and has read the store before the decision
    add_proposal(services, "p-1", "Camille prefers short replies")
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)

    memory_id = bot.proposals.get("p-1").memory_id
    assert bot.memory.get(memory_id).canonical_text == "Camille prefers short replies"
