"""`z` in the cockpit undoes the last approval, edit or forget; the detail pane lists versions."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.cockpit.support import (
    add_proposal,
    entry,
    notifications,
    pane_text,
    proposal_status,
    settle,
    table_keys,
)

SIZE = (120, 36)


async def test_z_undoes_an_approval(services, cockpit):
    add_proposal(services, "p-1", "Camille dislikes coriander")
    app = cockpit()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert proposal_status(services, "p-1") == "approved"
        assert any("z undoes it (30 min)" in n for n in notifications(app))

        await pilot.press("z")
        await settle(pilot)

        assert proposal_status(services, "p-1") == "pending"
        assert services.memory.count() == 0
        assert table_keys(app.screen.query_one(DataTable)) == ["p-1"]
        assert any(n.startswith("undid the approval") for n in notifications(app))


async def test_z_undoes_a_forget_held_in_the_cockpits_memory(services, cockpit):
    services.memory.save(entry("pref.coriander", "Camille dislikes coriander", kind="preference"))
    app = cockpit()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert "30 minutes while this process runs; nothing of it is kept on disk" in (
            app.screen.question  # the confirmation dialog, before anything goes
        )
        await pilot.press("y")
        await settle(pilot)
        assert services.memory.get("pref.coriander") is None

        await pilot.press("z")
        await settle(pilot)

        assert services.memory.require("pref.coriander").canonical_text == (
            "Camille dislikes coriander"
        )
        assert table_keys(app.screen.query_one(DataTable)) == ["pref.coriander"]


async def test_the_detail_pane_lists_an_entrys_versions(services, cockpit):
    services.memory.save(entry("fact.rent", "Le loyer est de 950 €"))
    services.memory.save(entry("fact.rent", "Le loyer est de 980 € depuis juillet"))
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        text = pane_text(app.screen.query_one("#memory-body"))

    assert "Versions (elora history fact.rent)" in text
    assert "v1 2025-03-14 09:30 create (system) · active: Le loyer est de 950 €" in text
    assert "v2 2025-03-14 09:30 update (system) · active: Le loyer est de 980 €" in text
