"""A-MAC admission: six factors in [0, 1] summed to 0-6; recommended at 4.2, rejected (and
restorable) below 2.8, pending between; each factor moves the way its name says."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.cli.main import main
from core.learning import admission
from core.learning.admission import APPLY_THRESHOLD, REJECT_FLOOR, Admission
from core.learning.candidates import Candidate
from tests.core.learning.support import NOW, capture, entry, proposals

FACTORS = {
    "future_utility", "factual_confidence", "semantic_novelty", "temporal_recency",
    "content_type_prior", "environment_prediction_improvement",
}  # fmt: skip


def candidate(text: str, kind: str = "fact", **fields) -> Candidate:
    return Candidate(
        text=text, kind=kind, **{"authority": "heuristic", "confidence": 0.7, **fields}
    )


@pytest.mark.parametrize(
    ("total", "status"),
    [(6.0, "recommended"), (4.2, "recommended"), (4.19, "pending"), (2.8, "pending"),
     (2.79, "rejected"), (0.0, "rejected")],
)  # fmt: skip
def test_the_verdict_follows_the_thresholds(total, status):
    share = total / 6
    verdict = Admission({f: share for f in FACTORS})

    assert verdict.total == pytest.approx(total, abs=0.01)
    assert verdict.status == status
    assert (APPLY_THRESHOLD, REJECT_FLOOR) == (4.2, 2.8)


async def test_every_factor_is_in_the_unit_interval_and_has_its_reason(services):
    services.memory.save(entry("fact.office", "Camille works from the Lyon office"))
    for kind in ("fact", "event", "hypothesis", "constraint", "expression"):
        for importance in (1, 5):
            verdict = admission.score(
                services,
                candidate("Camille works from the Lyon office on Mondays", kind,
                          importance=importance, temporality="expiring"),
                NOW - timedelta(days=900),
            )  # fmt: skip

            assert set(verdict.scores) == FACTORS
            assert all(0.0 <= v <= 1.0 for v in verdict.scores.values())
            assert 0.0 <= verdict.total <= 6.0
            assert len(verdict.reasons) == 6
            assert all(r.split()[0] in FACTORS for r in verdict.reasons)


def test_semantic_novelty_drops_for_a_near_duplicate_of_an_entry(services):
    text = "Camille is allergic to cashews"
    fresh = admission.score(services, candidate(text, "constraint"))
    services.memory.save(entry("rule.cashews", "Camille is allergic to cashew nuts",
                               kind="constraint"))  # fmt: skip

    near = admission.score(services, candidate(text, "constraint"))
    unrelated = admission.score(services, candidate("Camille's sister lives in Bordeaux"))

    assert fresh.scores["semantic_novelty"] == 1.0 and fresh.nearest_uuid is None
    assert near.scores["semantic_novelty"] < 0.3
    assert near.nearest_uuid == services.memory.get("rule.cashews").uuid
    assert unrelated.scores["semantic_novelty"] > 0.7
    assert near.total < fresh.total


async def test_temporal_recency_drops_for_an_old_source_capture(services):
    old = capture(services, "Je travaille chez Lumen", NOW - timedelta(days=400))
    recent = capture(services, "Je travaille chez Lumen", NOW - timedelta(days=2))

    old_p = await services.learner.submit(
        candidate("Camille works at Lumen", source_capture_ids=[old])
    )
    new_p = await services.learner.submit(
        candidate("Camille works at Lumen", source_capture_ids=[recent])
    )

    assert new_p.scores["temporal_recency"] > 0.95
    assert old_p.scores["temporal_recency"] < 0.15
    assert "400 days old" in " ".join(old_p.reasons)


def test_content_type_prior_differs_by_kind(services):
    priors = {
        kind: admission.score(services, candidate("Camille and the Atlas project", kind)).scores[
            "content_type_prior"
        ]
        for kind in ("constraint", "preference", "fact", "event", "hypothesis")
    }

    assert priors["constraint"] > priors["fact"] > priors["event"] > priors["hypothesis"]
    assert priors["preference"] > priors["fact"]


def test_operator_authority_raises_factual_confidence(services):
    said = admission.score(services, Candidate(text="Camille is left-handed", kind="fact",
                                               authority="operator", confidence=0.5))  # fmt: skip
    guessed = admission.score(services, candidate("Camille is left-handed", confidence=0.5))

    assert said.scores["factual_confidence"] > guessed.scores["factual_confidence"] == 0.5


async def test_verdicts_land_as_recommended_pending_or_rejected_proposals(services):
    strong = await services.learner.submit(
        candidate("Camille is allergic to penicillin", "constraint", importance=4, confidence=0.9)
    )
    middling = await services.learner.submit(candidate("Camille went to the dentist", "event"))
    old = capture(services, "peut-être", NOW - timedelta(days=1500))
    weak = await services.learner.submit(
        candidate("Camille might like jazz", "hypothesis", importance=1, confidence=0.2,
                  temporality="expiring", source_capture_ids=[old])
    )  # fmt: skip

    assert strong.total >= APPLY_THRESHOLD and strong.status == "recommended"
    assert REJECT_FLOOR <= middling.total < APPLY_THRESHOLD and middling.status == "pending"
    assert weak.total < REJECT_FLOOR and weak.status == "rejected"
    assert services.memory.count() == 0
    assert [p.id for p in proposals(services, "rejected")] == [weak.id]


async def test_elora_proposals_json_shows_scores_and_reasons(services, capsys):
    proposal = await services.learner.submit(candidate("Camille is allergic to penicillin",
                                                       "constraint"))  # fmt: skip

    assert main(["proposals", "--json"]) == 0

    [shown] = json.loads(capsys.readouterr().out)
    assert shown["id"] == proposal.id
    assert set(shown["scores"]) == FACTORS
    assert shown["total"] == pytest.approx(sum(shown["scores"].values()), abs=0.01)
    assert len(shown["reasons"]) == 6
    assert shown["reasons"][0].startswith("future_utility")
