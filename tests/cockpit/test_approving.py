"""While an approval is being written the proposal still counts as open, marked "approving…";
it leaves the queue only once the decision is stored."""

from __future__ import annotations

import threading

from textual.widgets import DataTable

from tests.cockpit.support import add_proposal, proposal_status, settle, table_keys, wait_until

SIZE = (120, 36)


async def test_a_proposal_being_approved_is_never_counted_as_decided(
    services, cockpit, monkeypatch
):
    add_proposal(services, "p-seat", "Camille prefers the window seat on trains")
    release = threading.Event()
    save = services.memory.save

    def slow_save(entry):  # the approval stalls while writing the entry (a loaded machine)
        release.wait(timeout=60)
        return save(entry)

    monkeypatch.setattr(services.memory, "save", slow_save)
    app = cockpit()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.sub_title == "open proposals: 1, 0 recommended ★"

        await pilot.press("a")
        await wait_until(pilot, lambda: services.proposals.get("p-seat").claimed_at is not None,
                         what="the approval's claim")  # fmt: skip
        await pilot.press("ctrl+r")  # a reload (a periodic refresh, the bot's) meanwhile
        await wait_until(pilot, lambda: "approving…" in app.screen.sub_title,
                         what="the reload showing the approval in progress")  # fmt: skip
        assert app.screen.sub_title.startswith("open proposals: 1")
        table = app.screen.query_one(DataTable)
        assert table_keys(table) == ["p-seat"]
        assert table.get_row("p-seat")[0].startswith("…")
        assert proposal_status(services, "p-seat") == "pending"

        release.set()
        await wait_until(pilot, lambda: proposal_status(services, "p-seat") == "approved",
                         what="the decision stored")  # fmt: skip
        await settle(pilot)
        assert app.screen.sub_title == "open proposals: 0, 0 recommended ★"
        assert table_keys(table) == []
    assert services.memory.count() == 1
