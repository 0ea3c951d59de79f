"""How a candidate relates to the closest entry — duplicate, contradict, supersede, deprecate,
time-limit — and what approving it does. Nothing known is ever destroyed."""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest

from core.cli.main import main
from core.learning import review
from core.learning.candidates import Candidate
from core.learning.contradictions import classify_relation, heuristic_relation
from core.recall.pack import build_pack
from tests.core.learning.support import NOW, entry


async def relate(services, old_id: str, old: str, new: str, **fields):
    """Store `old` as an entry, file `new` as a proposal; return (proposal, old entry)."""
    stored = services.memory.save(entry(old_id, old, confidence=0.8))
    candidate = Candidate(text=new, kind="fact", authority="heuristic", confidence=0.7, **fields)
    proposal = await services.learner.submit(candidate)
    assert proposal.conflict_uuid == stored.uuid
    return proposal, stored


def links(services, uuid: str) -> set[tuple[str, str, str]]:
    return {(x.from_uuid, x.relation, x.to_uuid) for x in services.memory.links_of([uuid])}


async def test_a_duplicate_confirms_the_entry_it_repeats(services):
    proposal, old = await relate(services, "fact.city", "Camille lives in Lyon",
                                 "Camille lives in Lyon")  # fmt: skip
    assert proposal.conflict_relation == "duplicate"

    confirmed = review.approve(services, proposal.id)

    assert confirmed.memory_id == "fact.city" and confirmed.uuid == old.uuid
    assert confirmed.observations == 2
    assert confirmed.confidence == pytest.approx(0.85)
    assert confirmed.last_touched == NOW
    assert services.memory.count() == 1
    assert services.proposals.get(proposal.id).memory_id == "fact.city"


async def test_a_changed_value_is_flagged_as_a_contradiction_not_folded_into_a_duplicate(
    services, capsys
):
    proposal, old = await relate(services, "fact.dentist", "Camille's dentist is Dr Benali",
                                 "Camille's dentist is Dr Morel")  # fmt: skip

    assert proposal.conflict_relation == "contradict"
    assert proposal.status == "pending"  # a contradiction always waits for the operator
    assert main(["proposals", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert shown["text"] == "Camille's dentist is Dr Morel"
    assert shown["conflict"] == {"memory_id": "fact.dentist",
                                 "text": "Camille's dentist is Dr Benali"}  # fmt: skip

    new = review.approve(services, proposal.id)

    assert new.memory_id != "fact.dentist"
    assert {e.status for e in (new, services.memory.require("fact.dentist"))} == {"active"}
    assert (new.uuid, "contradicts", old.uuid) in links(services, old.uuid)
    pack = build_pack(services, "Qui est le dentiste de Camille ?")
    items = {i["id"]: i for i in pack.items()}
    assert [c["id"] for c in items[new.memory_id]["contradictions"]] == ["fact.dentist"]


async def test_a_superseded_entry_is_kept_as_queryable_history(services, capsys):
    proposal, old = await relate(services, "fact.home", "Camille lives in Paris",
                                 "Camille has moved and now lives in Lyon")  # fmt: skip
    assert proposal.conflict_relation == "supersede"

    new = review.approve(services, proposal.id)

    previous = services.memory.require("fact.home")
    assert previous.status == "superseded" and previous.valid_to == NOW
    assert previous.canonical_text == "Camille lives in Paris"
    assert (new.uuid, "supersedes", old.uuid) in links(services, old.uuid)
    assert main(["memories", "--status", "superseded", "--json"]) == 0
    assert [e["memory_id"] for e in json.loads(capsys.readouterr().out)] == ["fact.home"]
    assert main(["memories", "--json"]) == 0
    assert [e["memory_id"] for e in json.loads(capsys.readouterr().out)] == [new.memory_id]
    items = {i["id"]: i for i in build_pack(services, "Where does Camille live?").items()}
    assert "fact.home" not in items  # history rides on the current entry, not beside it
    [history] = items[new.memory_id]["history"]
    assert history["id"] == "fact.home" and history["status"] == "superseded"
    assert history["valid_to"] == NOW.isoformat()


async def test_a_deprecated_entry_ends_without_a_replacement_being_lost(services):
    proposal, old = await relate(services, "fact.tennis",
                                 "Camille plays tennis at the Lyon club on Saturdays",
                                 "Camille no longer plays tennis at the Lyon club")  # fmt: skip
    assert proposal.conflict_relation == "deprecate"

    new = review.approve(services, proposal.id)

    ended = services.memory.require("fact.tennis")
    assert ended.status == "deprecated" and ended.valid_to == NOW
    assert (new.uuid, "deprecates", old.uuid) in links(services, old.uuid)
    assert services.memory.count() == 2


async def test_a_time_limit_bounds_the_old_entry_instead_of_adding_a_rival(services):
    proposal, old = await relate(services, "fact.office", "Camille works from the Paris office",
                                 "Camille works from the Paris office until May",
                                 valid_to=date(2025, 5, 31))  # fmt: skip
    assert proposal.conflict_relation == "time_limit"

    limited = review.approve(services, proposal.id)

    assert limited.uuid == old.uuid and limited.status == "active"
    assert limited.valid_to == datetime(2025, 5, 31)
    assert "until May" in limited.attributes["limited_by"]
    assert services.memory.count() == 1


async def test_when_heuristics_cannot_tell_the_lite_model_decides(scripted_services, scripted):
    old = scripted_services.memory.save(
        entry("decision.event-store", "The team uses Postgres for the event store")
    )
    scripted.enqueue('{"relation": "supersede"}')
    new_text = "The team uses MongoDB for the event store"

    proposal = await scripted_services.learner.submit(Candidate(text=new_text, kind="fact"))

    [prompt] = scripted.prompts()
    assert [call["tier"] for call in scripted.history] == ["LITE"]
    assert "Postgres" in prompt and "MongoDB" in prompt and '"relation"' in prompt
    assert proposal.conflict_uuid == old.uuid and proposal.conflict_relation == "supersede"
    assert any("supersede (model)" in r for r in proposal.reasons)


async def test_an_unusable_model_verdict_falls_back_to_the_safe_side(scripted_services, scripted):
    scripted_services.memory.save(
        entry("decision.event-store", "The team uses Postgres for the event store")
    )
    scripted.enqueue("It depends.")

    proposal = await scripted_services.learner.submit(
        Candidate(text="The team uses MongoDB for the event store", kind="fact")
    )

    # Similar but with a changed value: flagged for the reviewer, never merged as a duplicate.
    assert proposal.conflict_relation == "contradict"


async def test_approving_relations_never_destroys_an_entry(services):
    pairs = [
        ("fact.cat", "Camille's cat is called Miso", "Camille's cat is called Miso"),
        ("fact.dentist", "Camille's dentist is Dr Benali", "Camille's dentist is Dr Morel"),
        ("fact.home", "Camille lives in Paris", "Camille has moved and now lives in Lyon"),
        ("fact.tennis", "Camille plays tennis at the Lyon club on Saturdays",
         "Camille no longer plays tennis at the Lyon club"),
    ]  # fmt: skip
    for old_id, old, _ in pairs:
        services.memory.save(entry(old_id, old))
    for _, _, new in pairs:
        proposal = await services.learner.submit(Candidate(text=new, kind="fact"))
        review.approve(services, proposal.id)

    for old_id, old, _ in pairs:
        assert services.memory.require(old_id).canonical_text == old
    assert services.memory.count() == 7  # the duplicate confirmed, the others added


@pytest.mark.parametrize(
    ("old", "new", "relation"),
    [
        ("Camille lives in Paris", "camille lives in paris.", "duplicate"),
        ("Camille no longer drinks coffee", "Camille doesn't drink coffee any more", None),
        (
            "Camille works in Lyon until June",
            "Camille works in Lyon until June, Mondays",
            "duplicate",
        ),
        ("Camille eats meat", "Camille doesn't eat meat", "contradict"),
        ("Camille mange de la viande", "Camille n'en mange jamais", "contradict"),
        ("Camille is vegetarian", "Camille is not vegetarian", "contradict"),
        ("Camille drinks coffee", "Camille stopped drinking coffee", "deprecate"),
        ("Camille's dentist is Dr Benali", "Camille's dentist is Dr Morel", "contradict"),
        ("Camille lives in Paris", "Camille lives in Paris, France", "duplicate"),
    ],
)
def test_heuristic_relations_read_the_words_not_just_the_similarity(services, old, new, relation):
    stored = services.memory.save(entry("fact.x", old))

    assert heuristic_relation(new, stored, 0.95) == relation


async def test_without_a_model_an_undecided_pair_is_a_duplicate_only_when_nothing_changed(
    services,
):
    stored = services.memory.save(entry("fact.x", "The team uses Postgres for the event store"))

    same = await classify_relation("The team uses Postgres for the event store, in prod", stored,
                                   0.85)  # fmt: skip
    changed = await classify_relation("The team uses MongoDB for the event store", stored, 0.85)
    far = await classify_relation("Camille likes tea", stored, 0.55)

    assert same == ("duplicate", "similarity")
    assert changed == ("contradict", "similarity")
    assert far == ("none", "similarity")


async def test_a_restored_contradiction_still_waits_for_its_own_decision(services):
    services.memory.save(entry("rule.dentist", "Camille's dentist is Dr Benali", kind="constraint"))
    proposal = await services.learner.submit(
        Candidate(text="Camille's dentist is Dr Morel", kind="constraint", authority="heuristic",
                  confidence=0.95, importance=5)
    )  # fmt: skip
    assert proposal.conflict_relation == "contradict" and proposal.total >= 4.2
    assert proposal.status == "pending"

    review.reject(services, proposal.id)
    restored = review.restore(services, proposal.id)

    assert restored.status == "pending"
    assert review.approve_recommended(services) == []
