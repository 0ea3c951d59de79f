"""The memory screen: browse by tier/scope/topic/status, search two ways, read provenance and
history, forget with a confirmation, and page through many entries without loading them all."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import DataTable, Input

from cockpit.widgets.dialogs import ConfirmDialog
from tests.cockpit.support import (
    NOW,
    bulk_entries,
    entry,
    notifications,
    pane_text,
    screen_text,
    settle,
    table_keys,
    wait_until,
)

SIZE = (120, 36)


def _seed(services) -> None:
    """Four active entries of different tiers, scopes and topics, and a superseded version."""
    day = timedelta(days=1)
    services.memory.save(entry("pref.coriander", "Camille dislikes coriander", kind="preference",
                               topics=["food"], last_touched=NOW - 1 * day))  # fmt: skip
    services.memory.save(entry("fact.train", "Camille takes the train to Lyon on Mondays",
                               topics=["travel"], scope="user:7", last_touched=NOW - 2 * day))  # fmt: skip
    services.memory.save(entry("rule.reply", "Replies stay under five lines", kind="constraint",
                               topics=["style"], importance=4, last_touched=NOW - 3 * day))  # fmt: skip
    old = services.memory.save(entry("fact.office-old", "Camille works in Paris",
                                     topics=["work"], last_touched=NOW - 9 * day))  # fmt: skip
    new = services.memory.save(entry("fact.office", "Camille works in Lyon", topics=["work"],
                                     last_touched=NOW - 4 * day))  # fmt: skip
    services.memory.set_status("fact.office-old", "superseded", valid_to=NOW - 4 * day)
    services.memory.link(new.uuid, old.uuid, "supersedes")


def _keys(app) -> list[str]:
    return table_keys(app.screen.query_one(DataTable))


async def _open(pilot) -> None:
    await pilot.press("2")
    await settle(pilot)


async def test_browses_active_entries_most_recently_touched_first(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)

        assert _keys(app) == ["pref.coriander", "fact.train", "rule.reply", "fact.office"]
        assert app.screen.query_one(DataTable).get_row("rule.reply")[1:3] == ["proc", "4"]
        assert "rows 1–4 of 4" in screen_text(app)


async def test_t_and_x_step_through_tier_and_status_filters(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("t")  # semantic
        await settle(pilot)
        assert _keys(app) == ["fact.train", "fact.office"]
        await pilot.press("t", "t")  # episodic, then procedural
        await settle(pilot)
        assert _keys(app) == ["rule.reply"]

        await pilot.press("t", "t", "t")  # personalized, environment, any tier
        await pilot.press("x")  # superseded
        await settle(pilot)
        assert _keys(app) == ["fact.office-old"]
        await pilot.press("x", "x", "x", "x")  # deprecated, faded, fading soon, then any
        await settle(pilot)
        assert len(_keys(app)) == 5


async def test_scope_and_topic_filters(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        app.screen.query_one("#scope", Input).focus()
        await pilot.press(*"user:7", "enter")
        await settle(pilot)
        assert _keys(app) == ["fact.train"]

        app.screen.query_one("#scope", Input).value = ""
        app.screen.query_one("#topic", Input).focus()
        await pilot.press(*"food", "enter")
        await settle(pilot)
        assert _keys(app) == ["pref.coriander"]


async def test_slash_searches_full_text(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("slash")
        assert app.focused is app.screen.query_one("#search", Input)
        await pilot.press(*"Lyon", "enter")
        await settle(pilot)

        assert sorted(_keys(app)) == ["fact.office", "fact.train"]
        assert "full-text search 'Lyon': 2 found" in screen_text(app)
        assert app.focused is app.screen.query_one(DataTable)  # ready for f, arrows

        await pilot.press("escape")  # back to browsing
        await settle(pilot)
        assert len(_keys(app)) == 4


async def test_s_switches_to_semantic_search_which_finds_meaning_not_words(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("slash", *"herbe détestée en cuisine", "enter")
        await settle(pilot)
        assert _keys(app) == []  # no shared word: full text finds nothing

        await pilot.press("s")
        await settle(pilot)

        assert _keys(app)[0] == "pref.coriander"
        assert "semantic search" in screen_text(app)


async def test_detail_shows_provenance_links_and_superseded_history(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("down", "down", "down")  # fact.office
        await settle(pilot)
        text = pane_text(app.screen.query_one("#memory-body"))
        assert "Camille works in Lyon" in text
        assert "surface telegram · chat_id 42 · message_id 7001" in text
        assert "→ supersedes fact.office-old (superseded): Camille works in Paris" in text

        await pilot.press("x")  # superseded entries: the old version, with its end date
        await settle(pilot)
        text = pane_text(app.screen.query_one("#memory-body"))
        assert "fact.office-old · semantic · fact · superseded" in text
        assert "→ 2025-03-10" in text
        assert "← superseded by fact.office (active): Camille works in Lyon" in text


async def test_f_then_yes_forgets_the_entry_for_good(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert "Forget pref.coriander?" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)

        assert services.memory.get("pref.coriander") is None
        assert "pref.coriander" not in _keys(app)
        assert services.memory.fulltext("coriander") == []


async def test_f_then_cancel_keeps_the_entry(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("f")
        await settle(pilot)
        await pilot.press("enter")  # the focused button is Cancel: a stray Enter is safe
        await settle(pilot)
        assert services.memory.get("pref.coriander") is not None

        await pilot.press("f")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert services.memory.get("pref.coriander") is not None
        assert "pref.coriander" in _keys(app)


async def test_many_entries_load_one_page_at_a_time(services, cockpit):
    bulk_entries(services, 10_000)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        assert _keys(app) == [f"fact.bulk-{i:06d}" for i in range(50)]
        assert "rows 1–50 of 10,000" in screen_text(app)

        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert _keys(app) == [f"fact.bulk-{i:06d}" for i in range(50, 100)]
        assert "rows 51–100 of 10,000" in screen_text(app)
        assert app.screen.query_one(DataTable).cursor_row == 0

        await pilot.press("left_square_bracket", "left_square_bracket")  # not before the first
        await settle(pilot)
        assert _keys(app)[0] == "fact.bulk-000000"
        assert "rows 1–50 of 10,000" in screen_text(app)


async def test_forgetting_what_the_bot_already_forgot_is_an_error_notification(
    services, make_services, cockpit
):
    from core.memory.api import forget_memory

    _seed(services)
    bot = make_services()
    app = cockpit()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await _open(pilot)
        forget_memory(bot, "pref.coriander")  # meanwhile, from Telegram
        await pilot.press("f", "y")
        await settle(pilot)

        errors = notifications(app, "error")
        assert len(errors) == 1 and "no memory with id 'pref.coriander'" in errors[0]
        assert app.is_running
        assert _keys(app) == ["fact.train", "rule.reply", "fact.office"]


async def test_periodic_reloads_leave_the_detail_alone_while_nothing_changed(services):
    from cockpit.app import Cockpit

    _seed(services)
    links_of, asked = services.memory.links_of, []
    services.memory.links_of = lambda uuids: (asked.append(list(uuids)), links_of(uuids))[1]
    count, loads = services.memory.count, []
    services.memory.count = lambda *a, **k: (loads.append(1), count(*a, **k))[1]
    app = Cockpit(services, refresh_seconds=0.1, scheduler=False)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        assert len(asked) == 1  # the selected entry's details, once
        shown = len(loads)
        await wait_until(pilot, lambda: len(loads) >= shown + 3, what="periodic reloads")
        await settle(pilot)
        assert len(asked) == 1
        assert "Camille dislikes coriander" in pane_text(app.screen.query_one("#memory-body"))

        await pilot.press("down")  # another entry: its details
        await settle(pilot)
        assert len(asked) == 2
        assert "Camille takes the train" in pane_text(app.screen.query_one("#memory-body"))
