"""`elora undo`, `elora history` and `elora restore`, driven through main() as a user would."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from core.cli.main import main
from core.learning.candidates import Candidate
from core.memory.api import save_memory
from core.memory.unforget import forget
from core.undo.context import acting
from tests.core.memory.helpers import entry


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


async def propose(services, text: str):
    candidate = Candidate(text=text, kind="fact", authority="heuristic", confidence=0.7)
    return await services.learner.submit(candidate)


async def test_an_approval_is_undone_from_the_command_line(services, capsys):
    proposal = await propose(services, "Camille works at Lumen Logistics")

    code, out, _ = run(capsys, "proposals", "approve", proposal.id)
    hint = re.search(r"\(undo with `elora undo ([0-9a-f]{8})`\)", out)
    assert code == 0 and hint
    [listed] = as_json(capsys, "undo", "--list")
    assert (listed["id"][:8], listed["kind"], listed["target"]) == (hint[1], "approve", proposal.id)
    assert listed["surface"] == "cli"

    code, out, _ = run(capsys, "undo")

    assert code == 0 and out.startswith(f"undid the approval {hint[1]}: removed fact.")
    assert [p["id"] for p in as_json(capsys, "proposals")] == [proposal.id]
    assert as_json(capsys, "memories") == []
    assert as_json(capsys, "undo", "--list") == []
    code, _, err = run(capsys, "undo", hint[1])
    assert code == 1 and "already undone" in err


def test_a_remember_is_undone_by_its_id(home, capsys):
    saved = as_json(capsys, "remember", "Le garage Dupont ferme à 18h le samedi")
    as_json(capsys, "remember", "Le loyer est de 980 €")

    done = as_json(capsys, "undo", saved["action_id"])

    assert done["removed"] == [saved["memory_id"]]
    assert [m["canonical_text"] for m in as_json(capsys, "memories")] == ["Le loyer est de 980 €"]


def test_nothing_to_undo_is_said_plainly(home, capsys):
    code, _, err = run(capsys, "undo")
    assert code == 1 and "nothing to undo" in err
    code, out, _ = run(capsys, "undo", "--list")
    assert code == 0 and "nothing to undo" in out and "cannot be undone" in out


def test_history_lists_versions_and_restore_brings_one_back(home, capsys):
    as_json(capsys, "remember", "Camille drinks green tea", "--id", "pref.tea")
    as_json(capsys, "remember", "Camille switched to black coffee", "--id", "pref.tea")

    shown = as_json(capsys, "history", "pref.tea")
    assert [(v["version"], v["change"], v["surface"]) for v in shown["versions"]] == [
        (1, "remember", "cli"), (2, "remember", "cli")]  # fmt: skip
    assert [a["kind"] for a in shown["undoable"]] == ["remember", "remember"]
    code, out, _ = run(capsys, "history", "pref.tea")
    assert code == 0 and "green tea" in out and "black coffee" in out
    assert re.search(r"can be undone for \d+ more minute\(s\): remember [0-9a-f]{8}", out)

    code, out, _ = run(capsys, "restore", "pref.tea", "--version", "1")

    assert code == 0 and out.startswith("restored pref.tea to version 1 (now version 3)")
    [found] = as_json(capsys, "memories", "--search", "green tea")
    assert (
        found["memory_id"] == "pref.tea" and found["canonical_text"] == "Camille drinks green tea"
    )
    code, _, err = run(capsys, "restore", "pref.tea", "--version", "9")
    assert code == 1 and "no version 9 (versions: 1, 2, 3)" in err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_forget_on_the_command_line_says_it_keeps_no_undo(home, capsys, monkeypatch):
    saved = as_json(capsys, "remember", "Mon code de casier est 4711")
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))

    code, out, _ = run(capsys, "forget", saved["memory_id"])

    assert code == 0
    assert "`elora forget` keeps no undo" in out and "never on disk" in out
    # No forget to undo, and the remember's undo row went with the memory (a copy of its id).
    assert as_json(capsys, "undo", "--list") == []


def test_a_forget_held_by_a_running_bot_cannot_be_undone_from_here(services, capsys):
    save_memory(services, entry("fact.locker", "Mon code de casier est 4711"))
    with acting("telegram", actor="42", holds=True):  # the bot's process
        _, action = forget(services, "fact.locker")

    [listed] = as_json(capsys, "undo", "--list")
    assert listed["kind"] == "forget" and listed["held_by"].startswith("telegram process ")
    code, _, err = run(capsys, "undo", action.id)

    assert code == 1
    assert "can only be undone in telegram process" in err
    assert "nothing of it is kept on disk" in err
    assert services.memory.get("fact.locker") is None


@pytest.mark.parametrize("command", [["undo", "--help"], ["history", "--help"],
                                     ["restore", "--help"]])  # fmt: skip
def test_the_new_commands_document_themselves(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(command)
    assert exit_.value.code == 0 and "usage: elora" in capsys.readouterr().out
