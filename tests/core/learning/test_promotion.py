"""Promotion jobs: episodic → semantic when a pattern recurs three times, semantic → procedural
at five observations and confidence 0.90; both only propose, and a rerun adds nothing."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from core.cli.main import main
from core.learning import review
from core.learning.promotion import promote
from tests.core.learning.support import entry, proposals

CLIMBING = [
    "Camille went bouldering at Climb Up Gerland after work",
    "Camille went bouldering at Climb Up Gerland with Julien",
    "Camille went bouldering at Climb Up Gerland on Tuesday evening",
]


def save_event(services, n: int, text: str, **attributes):
    return services.memory.save(
        entry(f"event.e{n}", text, kind="event", valid_from=datetime(2025, 3, n + 1),
              topics=["sport"], attributes=attributes)
    )  # fmt: skip


def save_fact(services, observations: int, confidence: float):
    return services.memory.save(
        entry("fact.standup", "The Atlas standup is at 9:45 every weekday",
              observations=observations, confidence=confidence, topics=["atlas"])
    )  # fmt: skip


def promotions(services) -> list:
    return [p for p in proposals(services) if p.origin == "promotion"]


async def test_an_episode_seen_twice_is_not_a_pattern_yet(services):
    for n, text in enumerate(CLIMBING[:2]):
        save_event(services, n, text)

    assert await promote(services) == {
        "episodic_to_semantic": 0, "semantic_to_procedural": 0, "blocked_by_consent": 0,
        "withheld_by_consent": 0,
    }  # fmt: skip
    assert promotions(services) == []


async def test_an_episode_recurring_three_times_is_proposed_as_a_semantic_pattern(services):
    for n, text in enumerate(CLIMBING):
        save_event(services, n, text)
    save_event(services, 5, "Camille renewed her passport at the Lyon town hall")
    entries = services.memory.count()

    outcome = await promote(services)

    assert outcome["episodic_to_semantic"] == 1
    [proposal] = promotions(services)
    assert (proposal.kind, proposal.tier, proposal.authority) == ("pattern", "semantic", "job")
    assert proposal.status in ("pending", "recommended")
    assert "seen 3 times" in proposal.text and "2025-03-01" in proposal.text
    assert sorted(proposal.candidate["promoted_from"]) == ["event.e0", "event.e1", "event.e2"]
    assert services.memory.count() == entries  # a proposal, never a silent write


async def test_episodes_sharing_an_event_type_form_a_pattern_whatever_their_wording(services):
    texts = ["Dentist appointment with Dr Morel", "Détartrage chez la dentiste",
             "Camille had a filling done"]  # fmt: skip
    for n, text in enumerate(texts):
        save_event(services, n, text, event_type="dentist")

    assert (await promote(services))["episodic_to_semantic"] == 1


async def test_rerunning_promotion_does_not_duplicate_proposals(services):
    for n, text in enumerate(CLIMBING):
        save_event(services, n, text)
    save_fact(services, observations=5, confidence=0.95)

    first = await promote(services)
    second = await promote(services)

    assert (first["episodic_to_semantic"], first["semantic_to_procedural"]) == (1, 1)
    assert (second["episodic_to_semantic"], second["semantic_to_procedural"]) == (0, 0)
    assert len(promotions(services)) == 2


async def test_a_rejected_promotion_is_not_proposed_again(services):
    save_fact(services, observations=6, confidence=0.95)
    await promote(services)
    [proposal] = promotions(services)
    review.reject(services, proposal.id, note="not a rule")

    assert (await promote(services))["semantic_to_procedural"] == 0
    assert len(promotions(services)) == 1


@pytest.mark.parametrize(
    ("observations", "confidence", "promoted"),
    [(4, 0.99, 0), (5, 0.89, 0), (5, 0.90, 1), (9, 0.95, 1)],
)
async def test_semantic_to_procedural_needs_five_observations_at_confidence_090(
    services, observations, confidence, promoted
):
    save_fact(services, observations, confidence)

    outcome = await promote(services)

    assert outcome["semantic_to_procedural"] == promoted
    assert len(promotions(services)) == promoted


async def test_approving_a_procedural_promotion_writes_a_rule_and_keeps_the_fact(services):
    fact = save_fact(services, observations=5, confidence=0.9)
    await promote(services)
    [proposal] = promotions(services)
    assert (proposal.tier, proposal.kind) == ("procedural", "constraint")
    assert proposal.candidate["promoted_from"] == ["fact.standup"]

    rule = review.approve(services, proposal.id)

    assert rule.tier == "procedural" and rule.memory_id != "fact.standup"
    assert rule.canonical_text == fact.canonical_text
    assert rule.truth_mode == "inferred"
    kept = services.memory.require("fact.standup")
    assert kept.tier == "semantic" and kept.observations == 5


def test_elora_jobs_run_promotion_reports_what_it_proposed(home, embedder, capsys):
    from core.config import load_settings
    from core.services import Services

    svc = Services(load_settings(), embedder=embedder)
    save_fact(svc, observations=5, confidence=0.95)
    svc.close()

    assert main(["jobs", "run", "promotion", "--json"]) == 0

    outcome = json.loads(capsys.readouterr().out)
    assert outcome["job"] == "promotion" and outcome["semantic_to_procedural"] == 1
    assert main(["proposals", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert shown["origin"] == "promotion" and shown["tier"] == "procedural"


async def test_a_never_store_rule_holds_against_promotion_too(services):
    from core.learning.consent import add_never_store_rule

    add_never_store_rule(services, "standup")
    save_fact(services, observations=6, confidence=0.95)

    outcome = await promote(services)

    assert outcome["semantic_to_procedural"] == 0 and outcome["withheld_by_consent"] == 1
    assert promotions(services) == []
