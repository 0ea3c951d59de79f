"""End to end: import the example Telegram export, learn from it, then in the cockpit approve a
proposal, find the new memory, forget it, and chat with the (local, scripted) model."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, RichLog

from cockpit.app import Cockpit
from cockpit.widgets.dialogs import ConfirmDialog
from core.cli.main import main
from core.memory.schema import topics_from_text
from tests.cockpit.support import screen_text, settle, table_keys

EXPORT = Path(__file__).parents[2] / "data" / "examples" / "telegram" / "result.json"


async def test_import_learn_approve_find_forget_and_chat(make_services, llm, capsys):
    # The CLI runs its own event loop (asyncio.run): call it as a shell would, off this loop.
    assert await asyncio.to_thread(main, ["import", str(EXPORT)]) == 0
    assert await asyncio.to_thread(main, ["learn"]) == 0
    assert "proposal(s)" in capsys.readouterr().out
    services = make_services()  # the cockpit's own services on the same home
    assert services.proposals.count() > 0
    llm.enqueue("fake-lite", "Bonjour Camille ! Je suis là.")

    app = Cockpit(services, refresh_seconds=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        chosen = table_keys(table)[0]
        assert table.row_count == min(services.proposals.count(), 200)

        await pilot.press("a")
        await settle(pilot)
        proposal = services.proposals.get(chosen)
        assert proposal.status == "approved"
        entry = services.memory.get(proposal.memory_id)
        assert entry is not None and entry.canonical_text == proposal.text
        assert entry.sources and entry.sources[0]["surface"] == "telegram"  # provenance kept

        await pilot.press("2", "slash", *max(topics_from_text(entry.canonical_text), key=len),
                          "enter")  # fmt: skip
        await settle(pilot)
        assert proposal.memory_id in table_keys(app.screen.query_one(DataTable))
        found = table_keys(app.screen.query_one(DataTable)).index(proposal.memory_id)
        await pilot.press(*["down"] * found)  # onto the new memory
        await settle(pilot)
        assert entry.canonical_text[:40] in " ".join(screen_text(app).split())

        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await settle(pilot)
        assert services.memory.get(proposal.memory_id) is None
        assert proposal.memory_id not in table_keys(app.screen.query_one(DataTable))

        await pilot.press("3", *"Salut Elora, tu es là ?", "enter")
        await settle(pilot)
        log = "\n".join(line.text for line in app.screen.query_one(RichLog).lines)
        assert "elora Bonjour Camille ! Je suis là." in log

    assert [r["model"] for r in llm.requests] == ["fake-lite"]
    assert services.traces.recent(1)[0].surface == "cockpit"
