"""The proposals screen: what a reviewer sees, and each key's decision stored at once."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import DataTable

from cockpit.widgets.dialogs import ConfirmDialog, EditDialog
from core.learning.review import approve
from tests.cockpit.support import (
    add_capture,
    add_proposal,
    entry,
    notifications,
    proposal_status,
    screen_text,
    settle,
    table_keys,
)

SIZE = (120, 36)


def _seed(services) -> None:
    """A pending proposal contradicting an entry (with a source message), and a recommended one."""
    old = services.memory.save(
        entry("pref.coriander", "Camille loves coriander", kind="preference")
    )
    capture = add_capture(services, "Je n'aime pas la coriandre", message_id="48213")
    add_proposal(services, "p-coriander", "Camille dislikes coriander", total=3.9,
                 source_capture_ids=[capture], conflict_uuid=old.uuid,
                 conflict_relation="contradict")  # fmt: skip
    add_proposal(services, "p-train", "Camille takes the train to Lyon on Mondays", kind="fact",
                 status="recommended", total=4.5)  # fmt: skip


async def test_queue_lists_open_proposals_best_first_with_kind_tier_and_total(services, cockpit):
    _seed(services)
    add_proposal(services, "p-gone", "An old rejected idea", status="rejected")
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)

        assert table_keys(table) == ["p-train", "p-coriander"]
        assert table.get_row("p-train")[1:4] == ["4.50", "fact", "sem"]
        assert table.get_row("p-coriander")[1:4] == ["3.90", "preference", "pers"]
        assert table.get_row("p-train")[0].startswith("★")  # recommended
        assert "⚠" in table.get_row("p-coriander")[0]  # conflicts with an entry
        assert "open proposals: 2, 1 recommended" in screen_text(app)


async def test_detail_shows_factors_sources_and_the_conflicting_entry_side_by_side(
    services, cockpit
):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=(120, 50)) as pilot:  # tall enough for the whole detail
        await settle(pilot)
        await pilot.press("down")  # to the contradicting proposal
        await settle(pilot)
        text = screen_text(app)

    assert "preference · tier personalized · pending" in text
    for factor in ("future_utility", "factual_confidence", "semantic_novelty", "temporal_recency",
                   "content_type_prior", "environment_prediction_improvement"):  # fmt: skip
        assert factor in text
    assert "3.90 / 6" in text
    assert "Source messages" in text
    assert "Camille · telegram chat 42" in text and "#48213" in text
    assert "⚠ contradicts an entry" in text
    rows = [line for line in text.splitlines() if "Camille loves" in line]
    assert len(rows) == 1 and "Camille dislikes" in rows[0]  # side by side, on one line
    assert any("pref.coriander ·" in line and "A-MAC 3.90" in line for line in text.splitlines())


async def test_a_approves_the_selected_proposal_and_writes_the_entry_at_once(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)

        approved = services.proposals.get("p-train")
        assert approved.status == "approved"
        assert services.memory.get(approved.memory_id).canonical_text == (
            "Camille takes the train to Lyon on Mondays"
        )
        assert table_keys(app.screen.query_one(DataTable)) == ["p-coriander"]
        assert any("approved" in n for n in notifications(app))


async def test_approving_a_contradiction_keeps_both_entries_linked(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "a")
        await settle(pilot)

    new = services.memory.get(services.proposals.get("p-coriander").memory_id)
    old = services.memory.get("pref.coriander")
    assert new.canonical_text == "Camille dislikes coriander" and old.status == "active"
    links = services.memory.links_of([new.uuid])
    assert [(x.from_uuid, x.to_uuid, x.relation) for x in links] == [
        (new.uuid, old.uuid, "contradicts")
    ]


async def test_e_edits_then_approves_with_ctrl_s(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        editor = app.screen.query_one("#editor")
        editor.text = "Camille takes the 7:04 train to Lyon on Mondays"
        await pilot.press("ctrl+s")
        await settle(pilot)

        proposal = services.proposals.get("p-train")
        assert proposal.status == "approved" and proposal.decision_note == "edited"
        assert services.memory.get(proposal.memory_id).canonical_text == (
            "Camille takes the 7:04 train to Lyon on Mondays"
        )


async def test_escape_in_the_editor_changes_nothing(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)

        assert proposal_status(services, "p-train") == "recommended"
        assert services.memory.count() == 1  # only the seeded entry


async def test_r_rejects_then_v_shows_the_rejected_and_u_restores(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert proposal_status(services, "p-train") == "rejected"
        assert table_keys(app.screen.query_one(DataTable)) == ["p-coriander"]

        await pilot.press("v")
        await settle(pilot)
        assert table_keys(app.screen.query_one(DataTable)) == ["p-train"]
        assert "rejected proposals" in screen_text(app)
        assert "u Restore" in screen_text(app)

        await pilot.press("u")
        await settle(pilot)
        assert proposal_status(services, "p-train") == "recommended"
        assert table_keys(app.screen.query_one(DataTable)) == []

        await pilot.press("v")
        await settle(pilot)
        assert table_keys(app.screen.query_one(DataTable)) == ["p-train", "p-coriander"]


async def test_decision_keys_do_nothing_in_the_rejected_view(services, cockpit):
    _seed(services)
    add_proposal(services, "p-no", "Never mind", status="rejected")
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("a", "r")
        await settle(pilot)

        assert proposal_status(services, "p-no") == "rejected"
        assert "a Approve" not in screen_text(app)


async def test_shift_a_approves_every_recommended_after_confirmation(services, cockpit):
    _seed(services)
    add_proposal(services, "p-tea", "Camille drinks green tea", status="recommended", total=4.4)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert "Approve all 2 recommended" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)

        assert proposal_status(services, "p-train") == "approved"
        assert proposal_status(services, "p-tea") == "approved"
        assert proposal_status(services, "p-coriander") == "pending"
        assert table_keys(app.screen.query_one(DataTable)) == ["p-coriander"]


async def test_declining_the_bulk_confirmation_approves_nothing(services, cockpit):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)

        assert proposal_status(services, "p-train") == "recommended"
        assert not isinstance(app.screen, ConfirmDialog)


async def test_approving_what_the_bot_already_approved_is_an_error_notification(
    services, make_services, cockpit
):
    _seed(services)
    bot = make_services()  # the bot, beside the cockpit, on the same home
    app = cockpit()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        approve(bot, "p-train")  # decided elsewhere while the cockpit still lists it
        await pilot.press("a")
        await settle(pilot)

        errors = notifications(app, "error")
        assert len(errors) == 1 and "approved, not open for review" in errors[0]
        assert app.is_running
        assert "not open for review" in screen_text(app)  # the toast is on screen
        # The failure reloads the queue: the stale row is gone.
        assert table_keys(app.screen.query_one(DataTable)) == ["p-coriander"]
    assert services.memory.count() == 2  # one approval, not two


def test_an_unscored_conflicting_proposal_reads_a_dash_not_zero(services):
    from cockpit.screens.proposals import ProposalView, render_proposal

    old = services.memory.save(entry("pref.coriander", "Camille dislikes coriander"))
    proposal = add_proposal(services, "p-1", "Camille loves coriander", scores={},
                            conflict_uuid=old.uuid)  # fmt: skip
    proposal.total = None  # not scored yet
    console = Console(width=120, file=io.StringIO(), color_system=None, record=True)
    console.print(render_proposal(ProposalView(proposal, old, [])))
    text = console.export_text()
    assert "A-MAC -" in text and "0.00" not in text
