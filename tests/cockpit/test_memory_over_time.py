"""The Memory screen over time: what is fading soon and why, faded entries restored with `u`,
and a promoted entry's roots in both directions."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import DataTable

from core.memory.fading import fade_due
from core.memory.schema import PROMOTED_FROM
from tests.cockpit.support import (
    NOW,
    entry,
    notifications,
    pane_text,
    screen_text,
    settle,
    table_keys,
)

SIZE = (120, 36)
DAY = timedelta(days=1)


def _event(services, memory_id: str, text: str, touched, importance: int = 1):
    return services.memory.save(entry(memory_id, text, kind="event", importance=importance,
                                      last_touched=touched, topics=["atlas"]))  # fmt: skip


def _keys(app) -> list[str]:
    return table_keys(app.screen.query_one(DataTable))


def _detail(app) -> str:
    return pane_text(app.screen.query_one("#memory-body"))


async def test_fading_soon_lists_what_fades_first_with_the_date_and_the_reason(services, cockpit):
    _event(services, "event.soon", "Point budget Atlas avec Tom", NOW - 20 * DAY)
    _event(services, "event.later", "Revue de sprint Atlas", NOW - 1 * DAY)
    _event(services, "event.key", "Go-live Atlas le 5 juillet", NOW - 90 * DAY, importance=4)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("x", "x", "x", "x")  # superseded, deprecated, faded, fading soon
        await settle(pilot)

        assert _keys(app) == ["event.soon"]
        row = app.screen.query_one(DataTable).get_row("event.soon")
        assert row[3].startswith("fades 2025-03-24 · Point budget Atlas")
        assert "1 fading within 14 days" in screen_text(app)
        text = _detail(app)
        assert "Fading" in text
        assert ("fades on 2025-03-24: importance 1: 30 d = 30 days from 2025-02-22 "
                "(written or confirmed)") in text  # fmt: skip


async def test_u_restores_a_faded_entry_and_only_a_faded_one(services, cockpit, clock):
    _event(services, "event.old", "Point budget Atlas avec Tom", NOW - 40 * DAY)
    _event(services, "event.fresh", "Revue de sprint Atlas", NOW)
    fade_due(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("u")  # event.fresh is active: nothing to restore
        await settle(pilot)
        assert "Only a faded entry can be restored" in notifications(app, "warning")[0]

        await pilot.press("x", "x", "x")  # faded
        await settle(pilot)
        assert _keys(app) == ["event.old"]
        text = _detail(app)
        assert "Faded" in text and "on 2025-03-14: importance 1: 30 d" in text
        await pilot.press("u")
        await settle(pilot)

        assert services.memory.require("event.old").status == "active"
        assert "restored event.old · z undoes it (30 min)" in notifications(app)
        assert _keys(app) == []

        await pilot.press("z")  # the restore is undone: faded again
        await settle(pilot)
        assert services.memory.require("event.old").status == "faded"
        assert _keys(app) == ["event.old"]


async def test_a_promoted_entry_shows_its_roots_and_each_root_what_it_became(services, cockpit):
    root = _event(services, "event.bloc", "Camille a fait du bloc à Gerland", NOW - 2 * DAY)
    pattern = services.memory.save(entry(
        "pattern.bloc", "Camille fait du bloc à Gerland chaque semaine", kind="pattern",
        last_touched=NOW - DAY, topics=["sport"],
    ))  # fmt: skip
    services.memory.link(pattern.uuid, root.uuid, PROMOTED_FROM)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert _keys(app) == ["pattern.bloc", "event.bloc"]
        assert "→ promoted-from event.bloc (active): Camille a fait du bloc à Gerland" in _detail(
            app
        )

        await pilot.press("down")
        await settle(pilot)
        assert "← promoted into pattern.bloc (active): Camille fait du bloc" in _detail(app)
