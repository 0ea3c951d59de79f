"""Undoing approvals (plain, edited, superseding, confirming, in bulk), remembers and restores:
everything the action wrote is taken back, and nothing is undone over a later change."""

from __future__ import annotations

import asyncio

import pytest

from core.errors import CannotUndo, NotFound
from core.ids import memory_uuid
from core.jobs.registry import run_job
from core.learning import review
from core.learning.candidates import Candidate
from core.memory.api import remember, remember_or_confirm, search_memory
from core.memory.forget import forget_entry
from core.memory.tombstones import Forgotten, is_buried
from core.memory.versions import history
from core.undo import log
from core.undo.context import acting
from core.undo.reverse import undo
from tests.core.learning.support import NOW, entry
from tests.databases import search


async def propose(services, text: str, kind: str = "fact", **fields):
    candidate = Candidate(text=text, kind=kind, authority="heuristic", confidence=0.7, **fields)
    return await services.learner.submit(candidate)


def rows(services, sql: str, *params):
    return services.db.rows(sql, params)


def fts_hits(services, word: str) -> int:
    return len(search(services, "entries", [word]))


async def test_undoing_an_approval_removes_the_entry_and_reopens_the_proposal(services):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    status = proposal.status
    with acting("cockpit") as who:
        written = review.approve(services, proposal.id)
    assert fts_hits(services, "lumen") == 1 and services.vectors.get_vectors(
        "memory", [written.uuid]
    )

    done = undo(services, who.last_action)

    assert done.removed == [written.memory_id] and done.reopened == [proposal.id]
    back = services.proposals.get(proposal.id)
    assert (back.status, back.decided_at, back.memory_id) == (status, None, proposal.memory_id)
    assert services.memory.get(written.memory_id) is None
    assert fts_hits(services, "lumen") == 0
    assert services.vectors.get_vectors("memory", [written.uuid]) == {}
    assert rows(services, "SELECT count(*) FROM entry_versions")[0][0] == 0
    # Back in the queue, it can be approved again.
    assert review.approve(services, proposal.id).canonical_text == proposal.text


async def test_undoing_a_supersede_puts_the_old_entry_back_as_it_was(services):
    old = services.memory.save(entry("fact.home", "Camille lives in Paris", confidence=0.8))
    proposal = await propose(services, "Camille has moved and now lives in Lyon")
    assert proposal.conflict_relation == "supersede"
    with acting("telegram", actor="42") as who:
        new = review.approve(services, proposal.id)
    assert services.memory.require("fact.home").status == "superseded"

    undo(services, who.last_action)

    restored = services.memory.require("fact.home")
    assert (restored.status, restored.valid_to) == ("active", None)
    assert restored.last_touched == old.last_touched  # exactly as it was, not touched now
    assert services.memory.links_of([old.uuid]) == []
    assert services.memory.get(new.memory_id) is None
    changes = [(v.change, v.surface, v.data["status"]) for v in history(services, "fact.home")]
    assert changes == [("create", "system", "active"), ("superseded", "telegram", "superseded"),
                       ("undo", "system", "active")]  # fmt: skip


async def test_undoing_a_confirmation_takes_the_observation_back(services):
    services.memory.save(entry("fact.city", "Camille lives in Lyon", confidence=0.8))
    proposal = await propose(services, "Camille lives in Lyon")
    assert proposal.conflict_relation == "duplicate"
    confirmed = review.approve(services, proposal.id)
    assert confirmed.observations == 2

    undo(services)  # the latest action

    kept = services.memory.require("fact.city")
    assert (kept.observations, kept.confidence) == (1, 0.8)
    assert services.proposals.get(proposal.id).status in ("pending", "recommended")


async def test_undoing_an_edit_brings_the_earlier_text_back_and_searchable(services):
    services.memory.save(entry("pref.tea", "Camille drinks green tea", kind="preference"))
    proposal = services.proposals.create(
        text="Camille drinks genmaicha", kind="preference", tier="personalized",
        candidate={"text": "Camille drinks genmaicha", "kind": "preference",
                   "topics": ["tea"], "confidence": 0.9},
        authority="operator", origin="markdown", memory_id="pref.tea",
    )  # fmt: skip
    review.approve(services, proposal.id, edit="Camille drinks genmaicha, no sugar")
    assert services.memory.require("pref.tea").canonical_text.endswith("no sugar")

    undo(services)

    assert services.memory.require("pref.tea").canonical_text == "Camille drinks green tea"
    assert services.proposals.get(proposal.id).text == "Camille drinks genmaicha"
    assert [h["memory_id"] for h in search_memory(services, "green tea")][:1] == ["pref.tea"]
    assert fts_hits(services, "genmaicha") == 0


async def test_one_undo_takes_back_a_whole_bulk_approval(services):
    strong = [await propose(services, text, "constraint", importance=4)
              for text in ("Camille is allergic to penicillin", "Never book Camille on Ryanair")]  # fmt: skip
    assert {p.status for p in strong} == {"recommended"}
    review.approve_recommended(services)
    assert services.memory.count() == 2

    done = undo(services)

    assert services.memory.count() == 0
    assert sorted(done.reopened) == sorted(p.id for p in strong)
    assert {services.proposals.get(p.id).status for p in strong} == {"recommended"}


async def test_nothing_is_undone_over_a_later_change(services):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    with acting("cli") as who:
        written = review.approve(services, proposal.id)
    remember(services, "Camille works at Lumen Logistics")  # said again: confirmed meanwhile

    with pytest.raises(CannotUndo, match=rf"{written.memory_id} changed since.*elora history"):
        undo(services, who.last_action)

    assert services.memory.require(written.memory_id).observations == 2  # nothing moved
    assert services.proposals.get(proposal.id).status == "approved"


async def test_an_undo_expires_with_its_period_and_the_job_purges_it(services, clock):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    with acting("cli") as who:
        review.approve(services, proposal.id)
    clock.advance(minutes=31)

    with pytest.raises(CannotUndo, match=r"undo period .* ended"):
        undo(services, who.last_action)
    with pytest.raises(CannotUndo, match="nothing to undo"):
        undo(services)
    outcome = await run_job(services, "purge-undo")

    assert outcome["purged"] == 1
    with pytest.raises(NotFound):
        undo(services, who.last_action)


async def test_an_action_is_undone_once(services):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    with acting("cli") as who:
        review.approve(services, proposal.id)
    undo(services, who.last_action)

    with pytest.raises(CannotUndo, match="already undone"):
        undo(services, who.last_action)
    assert log.recent(services) == []


async def test_two_undos_at_once_undo_it_once(services):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    with acting("cli") as who:
        review.approve(services, proposal.id)

    results = await asyncio.gather(
        *(asyncio.to_thread(undo, services, who.last_action) for _ in range(2)),
        return_exceptions=True,
    )

    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, CannotUndo) for r in results if isinstance(r, Exception))
    assert services.proposals.get(proposal.id).status in ("pending", "recommended")


def test_undoing_a_remember_after_a_forget_buries_the_text_again(services):
    first = remember(services, "Mon code de casier est 4711")
    forget_entry(services, first.memory_id)
    assert is_buried(services, "Mon code de casier est 4711")
    with acting("cli") as who:
        again = remember_or_confirm(services, "Mon code de casier est 4711")
    assert not is_buried(services, "Mon code de casier est 4711")

    undo(services, who.last_action)

    assert services.memory.get(again.entry.memory_id) is None
    assert is_buried(services, "Mon code de casier est 4711")
    with pytest.raises(Forgotten):
        services.proposals.create(text="Mon code de casier est 4711", kind="fact",
                                  tier="semantic", candidate={})  # fmt: skip


def test_with_undo_turned_off_nothing_is_logged(make_undo_off):
    services = make_undo_off
    with acting("cli") as who:
        remember(services, "Camille works at Lumen Logistics")

    assert who.last_action is None
    assert rows(services, "SELECT count(*) FROM undo_actions")[0][0] == 0


@pytest.fixture
def make_undo_off(settings, embedder, clock):
    from core.services import Services

    svc = Services(settings.model_copy(update={"undo_minutes": 0}), embedder=embedder,
                   clock=clock)  # fmt: skip
    yield svc
    svc.close()


def test_the_undo_log_names_the_entry_and_versions_never_of_another(services):
    remember(services, "Camille works at Lumen Logistics", memory_id="fact.job")
    [action] = log.recent(services)
    assert (action.kind, action.target) == ("remember", "fact.job")
    assert action.entry_uuids == [memory_uuid("fact.job")]
    assert action.created_at == NOW and action.data["entries"][0]["before"] is None
