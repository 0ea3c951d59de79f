"""Fading meets versions and undo: a fade is a version in the entry's history (so no undo
silently reverts it), and restoring a faded entry is an action `elora undo` takes back."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from core.cli.main import main
from core.errors import CannotUndo
from core.memory.api import save_memory
from core.memory.fading import fade_due, restore
from core.memory.versions import history
from core.undo.context import acting
from core.undo.log import undoable
from core.undo.reverse import undo
from tests.core.memory.helpers import NOW, entry

DAY = timedelta(days=1)


def _event(services, memory_id: str, text: str):
    return save_memory(services, entry(memory_id, text, kind="event", importance=1,
                                       last_touched=NOW, topics=["atlas"]))  # fmt: skip


def test_a_fade_is_a_version_and_a_restore_of_it_is_undone(services, clock):
    _event(services, "event.demo", "Démo Atlas chez Nordhaven jeudi")
    clock.advance(days=31)
    fade_due(services)

    with acting("cockpit", holds=True) as who:
        restore(services, "event.demo")

    assert [(v.change, v.surface, v.data["status"]) for v in history(services, "event.demo")] == [
        ("create", "system", "active"), ("fade", "system", "faded"),
        ("unfade", "cockpit", "active")]  # fmt: skip
    assert who.last_action is not None

    done = undo(services)

    assert done.action.kind == "unfade" and done.restored == ["event.demo"]
    back = services.memory.require("event.demo")
    assert back.status == "faded" and back.attributes["fade_reason"]
    hits, _ = services.memory.search("démo Atlas Nordhaven", 5)
    assert hits == []  # out of recall again
    assert history(services, "event.demo")[-1].change == "undo"


def test_no_undo_reverts_a_fade_it_did_not_see(services, clock, monkeypatch):
    # The longest undo period, and an action that kept the entry's old last_touched: the
    # entry fades while the action is still open.
    monkeypatch.setattr(services.settings, "undo_minutes", 7 * 24 * 60)
    old = NOW - 29 * DAY
    save_memory(services, entry("event.demo", "Démo Atlas chez Nordhaven jeudi", kind="event",
                                importance=1, last_touched=old))  # fmt: skip
    with acting("cli"), undoable(services, "remember", "event.demo"):
        save_memory(services, entry("event.demo", "Démo Atlas chez Nordhaven vendredi",
                                    kind="event", importance=1, last_touched=old))  # fmt: skip
    clock.advance(days=2)
    assert fade_due(services)["faded_ids"] == ["event.demo"]

    with pytest.raises(CannotUndo, match="changed since this action"):
        undo(services)

    assert services.memory.require("event.demo").status == "faded"


@pytest.fixture
def pinned(monkeypatch):
    """The clock `elora` reads in this process, pinned and movable."""
    from core.clock import SystemClock

    moment = {"now": NOW}
    monkeypatch.setattr(SystemClock, "now", lambda self: moment["now"])
    return moment


def test_the_cli_undoes_a_restore_of_a_faded_entry(home, pinned, capsys):
    assert main(["remember", "Point budget Atlas avec Tom", "--kind", "event", "--id",
                 "event.budget"]) == 0  # fmt: skip
    pinned["now"] = NOW + 31 * DAY
    assert main(["jobs", "run", "fade", "--json"]) == 0
    capsys.readouterr()

    assert main(["memories", "restore", "event.budget"]) == 0
    out = capsys.readouterr().out
    action = re.search(r"undo with `elora undo ([0-9a-f]{8})`", out)
    assert out.startswith("restored event.budget") and action

    assert main(["undo", action.group(1)]) == 0
    assert "undid the restore of a faded entry" in capsys.readouterr().out
    assert main(["memories", "--status", "faded", "--json"]) == 0
    assert [e["memory_id"] for e in json.loads(capsys.readouterr().out)] == ["event.budget"]
    assert main(["history", "event.budget", "--json"]) == 0
    changes = [v["change"] for v in json.loads(capsys.readouterr().out)["versions"]]
    assert changes == ["remember", "fade", "unfade", "undo"]
