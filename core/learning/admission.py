"""A-MAC admission: six factors in [0, 1] summed to 0-6, each with its reason.

future_utility, factual_confidence, semantic_novelty (1 − max similarity to existing entries),
temporal_recency, content_type_prior (per kind), environment_prediction_improvement.
Total ≥ 4.2 is recommended (APPLY); below the floor the candidate goes to the restorable
rejected archive; the rest waits for the operator.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from core.errors import EloraError
from core.learning.candidates import Candidate

if TYPE_CHECKING:
    from core.services import Services

APPLY_THRESHOLD = 4.2
REJECT_FLOOR = 2.8
RECENCY_HALF_LIFE_DAYS = 120

CONTENT_TYPE_PRIOR = {
    "constraint": 0.9,
    "preference": 0.85,
    "decision": 0.85,
    "fact": 0.75,
    "pattern": 0.7,
    "event": 0.6,
    "expression": 0.5,
    "hypothesis": 0.4,
}
FUTURE_UTILITY = {
    "constraint": 0.85,
    "preference": 0.8,
    "decision": 0.75,
    "fact": 0.7,
    "pattern": 0.7,
    "event": 0.5,
    "expression": 0.45,
    "hypothesis": 0.35,
}
# The environment tier: a base, more with a stated prediction, more with each further
# observation (up to a cap).
ENVIRONMENT_BASE = 0.6
ENVIRONMENT_PREDICTION = 0.2
ENVIRONMENT_EVIDENCE = 0.1
ENVIRONMENT_EVIDENCE_MAX = 0.2
ENVIRONMENT_GAIN = {
    "environment": 0.9,
    "procedural": 0.7,
    "personalized": 0.65,
    "semantic": 0.5,
    "episodic": 0.35,
}


@dataclass
class Admission:
    """Scores, total, verdict and the reason behind each factor."""

    scores: dict[str, float]
    reasons: list[str] = field(default_factory=list)
    nearest_uuid: str | None = None
    nearest_similarity: float = 0.0

    @property
    def total(self) -> float:
        """Sum of the six factors (0-6)."""
        return round(sum(self.scores.values()), 3)

    @property
    def status(self) -> str:
        """recommended, pending or rejected."""
        if self.total >= APPLY_THRESHOLD:
            return "recommended"
        if self.total < REJECT_FLOOR:
            return "rejected"
        return "pending"


def score(
    services: Services,
    candidate: Candidate,
    captured_at: datetime | None = None,
    exclude: Collection[str] = (),
) -> Admission:
    """Score a candidate against the current memory (minus `exclude`, e.g. what it is promoted
    from: an entry is not novel compared with itself)."""
    now = services.clock.now()
    reasons = []
    utility = FUTURE_UTILITY[candidate.kind] + 0.03 * (candidate.importance - 2)
    if candidate.temporality == "expiring":
        utility -= 0.2
    utility = _clip(utility)
    reasons.append(
        f"future_utility {utility:.2f}: {candidate.kind}, importance {candidate.importance}"
    )

    confidence = 0.95 if candidate.authority == "operator" else candidate.confidence
    reasons.append(f"factual_confidence {confidence:.2f}: {candidate.authority} authority")

    nearest_uuid, nearest = _nearest(services, candidate.text, exclude)
    novelty = _clip(1.0 - nearest)
    reasons.append(
        f"semantic_novelty {novelty:.2f}: "
        + (
            f"closest entry at similarity {nearest:.2f}"
            if nearest_uuid
            else "nothing similar stored"
        )
    )

    age_days = max(0.0, (now - (captured_at or now)).total_seconds() / 86400)
    recency = _clip(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))
    reasons.append(f"temporal_recency {recency:.2f}: source is {age_days:.0f} days old")

    prior = CONTENT_TYPE_PRIOR[candidate.kind]
    reasons.append(f"content_type_prior {prior:.2f}: {candidate.kind}")

    gain, why = prediction_gain(candidate)
    reasons.append(f"environment_prediction_improvement {gain:.2f}: {why}")

    scores = {
        "future_utility": round(utility, 3),
        "factual_confidence": round(confidence, 3),
        "semantic_novelty": round(novelty, 3),
        "temporal_recency": round(recency, 3),
        "content_type_prior": prior,
        "environment_prediction_improvement": gain,
    }
    return Admission(scores, reasons, nearest_uuid, nearest)


def prediction_gain(candidate: Candidate) -> tuple[float, str]:
    """How much a candidate would improve Elora's predictions of its environment, and why.

    By tier, except the environment tier itself, where it depends on what the candidate
    predicts: a stated prediction is worth more than a bare observation, and each further
    piece of evidence (messages, or times observed) makes it more dependable."""
    tier = candidate.tier or "semantic"
    if tier != "environment":
        return ENVIRONMENT_GAIN[tier], f"{tier} tier"
    evidence = max(candidate.observations, len(candidate.source_capture_ids), 1)
    gain = ENVIRONMENT_BASE + (ENVIRONMENT_PREDICTION if candidate.prediction else 0.0)
    gain = _clip(gain + min(ENVIRONMENT_EVIDENCE_MAX, ENVIRONMENT_EVIDENCE * (evidence - 1)))
    said = "states a prediction" if candidate.prediction else "no prediction stated"
    return round(gain, 3), f"environment tier, {said}, seen {evidence}×"


def _nearest(
    services: Services, text: str, exclude: Collection[str] = ()
) -> tuple[str | None, float]:
    """The closest active entry and its calibrated similarity (0 when memory is empty)."""
    try:
        services.vectorspace.ensure_compatible()
        vector = services.embedder.embed_passages([text])[0]
        hits = services.vectors.query(
            "memory", vector.tolist(), 1 + len(exclude), {"status": "active"}
        )
    except EloraError:
        return None, 0.0
    hits = [h for h in hits if h.id not in exclude]
    if not hits:
        return None, 0.0
    return hits[0].id, services.embedder.calibrate(hits[0].similarity, "pair")


def _clip(value: float) -> float:
    return max(0.0, min(1.0, value)) if not math.isnan(value) else 0.0
