"""Lifetime by importance: low-importance episodic entries fade (archived, restorable, never
deleted) on a schedule that importance, recalls into evidence packs and confirmations extend;
`elora jobs run fade` archives what is due, `elora memories fading` and the audit say what is
due and why, `elora memories restore ID` brings an entry back."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.audit import audit
from core.cli.main import main
from core.memory import fading
from core.memory.api import confirm_entry, save_memory
from core.memory.fading import count_recalls, fade_due, lifetime, restore, schedule
from core.pipeline import Request
from tests.core.memory.helpers import NOW, entry

DAY = timedelta(days=1)


def _event(services, memory_id: str, text: str, importance: int = 1, topics=("atlas",)):
    return save_memory(services, entry(memory_id, text, kind="event", importance=importance,
                                       last_touched=NOW, topics=list(topics)))  # fmt: skip


@pytest.mark.parametrize(("importance", "days"), [(1, 30), (2, 60), (3, 120)])
def test_importance_sets_the_first_lifetime(services, importance, days):
    saved = _event(services, "event.demo", "Démo Atlas chez Nordhaven", importance)

    life = lifetime(saved)

    assert life.days == days and life.fades_at == NOW + days * DAY
    assert life.reason() == f"importance {importance}: {days} d = {days} days from 2024-06-15 " \
        "(written or confirmed)"  # fmt: skip


def test_key_entries_and_other_tiers_never_fade(services):
    key = _event(services, "event.wedding", "Mariage de Léa le 3 mai", importance=4)
    fact = save_memory(services, entry("fact.office", "Camille travaille à Lyon",
                                       last_touched=NOW - 400 * DAY))  # fmt: skip

    assert lifetime(key) is None and lifetime(fact) is None
    assert [life.memory_id for life in schedule(services)] == []


def test_confirmations_and_recalls_multiply_the_lifetime(services):
    saved = _event(services, "event.demo", "Démo Atlas chez Nordhaven", importance=1)
    confirmed = confirm_entry(services, saved, [])  # said again: observations 2

    life = lifetime(confirmed, recalls=2, last_recalled=NOW + 5 * DAY)

    assert life.days == 30 * 3 * 2  # × (1 + 2 recalls) × (1 + 1 confirmation)
    assert life.fades_at == NOW + 5 * DAY + 180 * DAY  # counted from the last recall
    assert "× 3 (2 recalls) × 2 (1 confirmation)" in life.reason()


async def test_an_entry_recalled_into_a_pack_outlives_one_that_was_not(services, clock):
    _event(services, "event.demo", "Démo Atlas chez Nordhaven le jeudi 12 septembre")
    _event(services, "event.dentist", "Détartrage chez le dentiste Dr Morel", topics=["santé"])
    clock.advance(days=20)
    reply = await services.assistant.handle(Request(
        surface="cli", chat_id="c1", text="Quand est la démo Atlas chez Nordhaven ?",
        user_id="operator", sender="operator"))  # fmt: skip
    assert "event.demo" in reply.pack.item_ids()  # the request's pack used it
    assert "event.dentist" not in reply.pack.item_ids(), reply.pack.item_ids()

    clock.advance(days=11)  # 31 days after both were written
    outcome = fade_due(services)

    assert outcome["faded_ids"] == ["event.dentist"] and outcome["recalls_counted"] >= 1
    assert services.memory.require("event.dentist").status == "faded"
    demo = services.memory.require("event.demo")
    assert demo.status == "active"
    [life] = schedule(services)
    assert (life.memory_id, life.recalls) == ("event.demo", 1)
    assert life.fades_at == NOW + 20 * DAY + 60 * DAY  # 30 d × 2, from the recall


def test_recalls_are_counted_once_however_often_the_job_runs(services):
    _event(services, "event.demo", "Démo Atlas chez Nordhaven")
    services.traces.record(surface="cli", pack={"items": ["identity", "event.demo", "archive:x"]})

    assert count_recalls(services) == 1
    assert count_recalls(services) == 0
    assert fading.recall_counts(services, [services.memory.require("event.demo").uuid]) == {
        services.memory.require("event.demo").uuid: (1, NOW)
    }


def test_a_faded_entry_keeps_everything_leaves_recall_and_comes_back(services, clock):
    saved = _event(services, "event.demo", "Démo Atlas chez Nordhaven jeudi")
    clock.advance(days=31)

    fade_due(services)

    faded = services.memory.require("event.demo")
    assert (faded.status, faded.canonical_text, faded.sources) == (
        "faded", saved.canonical_text, saved.sources)  # fmt: skip
    assert faded.attributes["faded_at"] == clock.now().isoformat()
    assert "importance 1: 30 d" in faded.attributes["fade_reason"]
    hits, _ = services.memory.search("démo Atlas Nordhaven", 5)
    assert hits == []
    vector = services.embedder.embed_query("démo Atlas Nordhaven").tolist()
    [hit] = services.vectors.query("memory", vector, 5, {"status": "faded"})  # not re-embedded
    assert hit.id == saved.uuid and faded.vector_state == "indexed"

    back = restore(services, "event.demo")

    assert back.status == "active" and "faded_at" not in back.attributes
    assert lifetime(back).fades_at == clock.now() + 30 * DAY  # a fresh lifetime
    hits, _ = services.memory.search("démo Atlas Nordhaven", 5)
    assert [h.entry.memory_id for h in hits] == ["event.demo"]


def test_only_a_faded_entry_can_be_restored(services):
    from core.errors import InvalidInput

    _event(services, "event.demo", "Démo Atlas chez Nordhaven")

    with pytest.raises(InvalidInput, match="not faded"):
        restore(services, "event.demo")


def test_the_audit_counts_what_is_due_faded_and_restored(services, clock):
    _event(services, "event.one", "Point budget Atlas", importance=1)
    _event(services, "event.two", "Revue de sprint Atlas", importance=1)
    _event(services, "event.three", "Atelier maquettes Atlas", importance=2)
    clock.advance(days=31)
    fade_due(services)
    restore(services, "event.two")

    figures = audit(services)["fading"]

    assert (figures["faded"], figures["faded_7d"], figures["restored_7d"]) == (1, 1, 1)
    assert figures["due_soon"] == 0  # event.three fades at day 60, event.two at day 61
    clock.advance(days=20)
    soon = audit(services)["fading"]
    assert soon["due_soon"] == 2
    assert [n["memory_id"] for n in soon["next"]] == ["event.three", "event.two"]
    assert soon["next"][1]["reason"].endswith("(restored)")


@pytest.fixture
def pinned(monkeypatch):
    """The clock `elora` reads in this process, pinned and movable."""
    from core.clock import SystemClock

    moment = {"now": NOW}
    monkeypatch.setattr(SystemClock, "now", lambda self: moment["now"])
    return moment


def test_the_cli_fades_lists_and_restores(home, pinned, capsys):
    assert main(["remember", "Point budget Atlas avec Tom", "--kind", "event", "--id",
                 "event.budget"]) == 0  # fmt: skip
    pinned["now"] = NOW + 20 * DAY
    capsys.readouterr()

    assert main(["memories", "fading", "--days", "14", "--json"]) == 0
    [due] = json.loads(capsys.readouterr().out)
    assert due["memory_id"] == "event.budget" and due["fades_at"].startswith("2024-07-15")

    pinned["now"] = NOW + 31 * DAY
    assert main(["jobs", "run", "fade", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["faded_ids"] == ["event.budget"]
    assert main(["memories", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["memories", "--status", "faded", "--json"]) == 0
    [faded] = json.loads(capsys.readouterr().out)
    assert faded["memory_id"] == "event.budget" and faded["attributes"]["fade_reason"]

    assert main(["memories", "restore", "event.budget"]) == 0
    assert "restored event.budget; fades again on 2024-08-15" in capsys.readouterr().out
    assert main(["memories", "restore", "event.budget"]) == 1
    assert "active, not faded" in capsys.readouterr().err
