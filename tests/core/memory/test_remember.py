"""Explicit saves: saying the same thing again confirms the one memory, and a generated id
keeps what the sentence means (a negation is part of it)."""

from __future__ import annotations

import pytest

from core.memory.api import remember, remember_or_confirm
from core.memory.schema import slug_for

CORIANDER = "Camille n'aime pas la coriandre"


def test_the_same_sentence_remembered_five_times_is_one_entry_seen_five_times(services, clock):
    first = remember_or_confirm(services, CORIANDER, kind="preference")
    assert not first.confirmed
    for _ in range(4):
        clock.advance(hours=1)
        again = remember_or_confirm(services, CORIANDER, kind="preference")
        assert again.confirmed

    [entry] = services.memory.list(limit=10)
    assert entry.memory_id == first.entry.memory_id == again.entry.memory_id
    assert entry.observations == 5
    assert entry.last_touched == clock.now() > first.entry.last_touched
    assert entry.confidence >= first.entry.confidence


@pytest.mark.parametrize(
    "variant",
    [
        "camille n'aime pas la coriandre",
        "Camille n’aime pas la coriandre.",
        "  CAMILLE N'AIME PAS LA CORIANDRE !",
        "Camille n'aime pas la coriandre…",
    ],
)
def test_case_accents_and_punctuation_do_not_make_another_memory(services, variant):
    original = remember(services, CORIANDER, kind="preference")

    again = remember_or_confirm(services, variant, kind="preference")

    assert again.confirmed and again.entry.memory_id == original.memory_id
    assert services.memory.count(status="active") == 1
    assert again.entry.canonical_text == CORIANDER  # the first wording stays


def test_accents_are_folded_when_comparing_texts(services):
    original = remember(services, "Léa déménage à Lyon en été")

    again = remember_or_confirm(services, "Lea demenage a Lyon en ete")

    assert again.confirmed and again.entry.memory_id == original.memory_id


def test_the_opposite_sentence_is_another_memory(services):
    dislikes = remember(services, CORIANDER, kind="preference")
    likes = remember(services, "Camille aime la coriandre", kind="preference")

    assert likes.memory_id != dislikes.memory_id
    assert services.memory.count(status="active") == 2


def test_the_same_sentence_in_another_scope_is_another_memory(services):
    mine = remember(services, "Mon code de casier est 4711", scope="user:7")
    theirs = remember(services, "Mon code de casier est 4711", scope="user:8")

    assert mine.memory_id != theirs.memory_id
    assert (mine.observations, theirs.observations) == (1, 1)


def test_the_same_words_in_another_tier_are_another_memory(services):
    fact = remember(services, "Stand-up at 9:30 every weekday")
    rule = remember(services, "Stand-up at 9:30 every weekday", kind="constraint")

    assert (fact.tier, rule.tier) == ("semantic", "procedural")
    assert rule.memory_id != fact.memory_id and rule.observations == 1


def test_a_superseded_entry_is_not_confirmed_by_saying_it_again(services):
    old = remember(services, "J'habite à Paris")
    services.memory.set_status(old.memory_id, "superseded")

    again = remember_or_confirm(services, "J'habite à Paris")

    assert not again.confirmed and again.entry.memory_id != old.memory_id
    assert again.entry.status == "active"


def test_a_confirmation_keeps_every_source(services):
    first = remember(services, CORIANDER, sources=[{"capture_id": "a", "origin": "operator"}])
    remember(services, CORIANDER, sources=[{"capture_id": "b", "origin": "operator"}])

    entry = services.memory.get(first.memory_id)
    assert [s["capture_id"] for s in entry.sources] == ["a", "b"]


def test_saving_the_same_text_under_its_own_id_confirms_it(services):
    remember(services, "Le loyer est de 950 €", memory_id="fact.rent")
    again = remember_or_confirm(services, "le loyer est de 950 €.", memory_id="fact.rent")

    assert again.confirmed and again.entry.observations == 2


# -- ids keep negations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("negative", "positive"),
    [
        ("Camille n'aime pas la coriandre", "Camille aime la coriandre"),
        ("Camille ne mange jamais de viande", "Camille mange de la viande"),
        ("Marc ne boit plus de café", "Marc boit du café"),
        ("Léa n'a aucun allergie", "Léa a allergie"),
        ("Camille does not like coriander", "Camille does like coriander"),
        ("Camille doesn't like coriander", "Camille likes coriander"),
        ("Camille don’t like coriander", "Camille like coriander"),
        ("Marc never drinks coffee", "Marc drinks coffee"),
        ("No meetings before 10am", "Meetings before 10am"),
        ("Camille can't drive", "Camille can drive"),
        ("Marc won't fly", "Marc will fly"),
    ],
)
def test_a_generated_id_keeps_the_negation(negative, positive):
    assert slug_for("preference", negative) != slug_for("preference", positive)


def test_the_coriander_id_reads_as_a_dislike():
    slug = slug_for("preference", CORIANDER)

    assert slug.startswith("pref.") and "pas" in slug.split(".", 1)[1].split("-")
    assert "coriandre" in slug


def test_a_negation_does_not_push_the_subject_out_of_the_id():
    assert "coriander" in slug_for("preference", "Camille doesn't like coriander")


def test_remembering_a_dislike_after_a_like_gets_its_own_readable_id(services):
    likes = remember(services, "Camille aime la coriandre", kind="preference")
    dislikes = remember(services, CORIANDER, kind="preference")

    assert not dislikes.memory_id.startswith(likes.memory_id)  # not `…-2`
    assert "pas" in dislikes.memory_id


# -- every path that keeps what the operator said ----------------------------------------------


def _proposal(services, text: str):
    return services.proposals.create(
        text=text, kind="preference", tier="personalized", authority="model", origin="tool",
        candidate={"text": text, "kind": "preference", "tier": "personalized", "scope": "global",
                   "topics": ["food"], "importance": 2, "confidence": 0.7},
    )  # fmt: skip


def test_approving_a_proposal_that_says_a_kept_memory_again_confirms_it(services):
    from core.learning.review import approve

    kept = remember(services, CORIANDER, kind="preference")

    entry = approve(services, _proposal(services, "Camille n’aime pas la coriandre.").id)

    assert entry.memory_id == kept.memory_id and entry.observations == 2
    assert services.memory.count(status="active") == 1


def test_two_identical_proposals_approved_make_one_entry(services):
    from core.learning.review import approve

    first = approve(services, _proposal(services, CORIANDER).id)
    second = approve(services, _proposal(services, CORIANDER).id)

    assert second.memory_id == first.memory_id and second.observations == 2
    assert services.memory.count(status="active") == 1


async def test_saying_remember_that_twice_in_chat_keeps_one_memory(services):
    message = "Retiens que Camille n'aime pas la coriandre."
    await services.learner.after_exchange(message, None)
    await services.learner.after_exchange(message, None)

    [entry] = services.memory.list(limit=10)
    assert entry.observations == 2
