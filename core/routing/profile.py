"""The capability profile and the router's gate.

Each dimension (a kind of request) holds p in [0, 1], updated by EMA from feedback r:
p ← p + α(r − p). An absent dimension reads 0.5 (honest ignorance). A profile not updated for
48 h is dampened toward 0.5, because a frozen profile is worse than none. The gate mixes the
classifier's verbal confidence with the profile: c = λ·c_verbal + (1−λ)·c_profile; below θ the
request starts one tier higher.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlmodel import select

from core.routing.tiers import higher
from core.storage.models import CapabilityDimension

if TYPE_CHECKING:
    from core.clock import Clock
    from core.recall.classifier import Classification
    from core.storage.db import Database

STALE_AFTER = timedelta(hours=48)
FEEDBACK = {"up": 1.0, "down": 0.0, "correction": 0.0, "escalation": 0.0}


@dataclass(frozen=True)
class GateDecision:
    """The starting tier and why."""

    tier: str
    c: float
    c_verbal: float
    c_profile: float
    raised: bool

    def to_json(self) -> dict:
        """Plain data for the trace."""
        return {
            "tier": self.tier,
            "c": round(self.c, 3),
            "c_verbal": round(self.c_verbal, 3),
            "c_profile": round(self.c_profile, 3),
            "raised": self.raised,
        }


def dimension_of(classification: Classification) -> str:
    """The profile dimension a request belongs to."""
    return classification.intent


class CapabilityProfile:
    """Reads and updates the profile stored in SQLite."""

    def __init__(
        self, db: Database, clock: Clock, *, alpha: float, gate_lambda: float, gate_theta: float
    ):
        self.db = db
        self.clock = clock
        self.alpha = alpha  # EMA step of each feedback
        self.gate_lambda = gate_lambda  # weight of the classifier's confidence vs the profile's
        self.gate_theta = gate_theta  # below this confidence the start tier goes one up

    def _row(self, dimension: str) -> CapabilityDimension | None:
        with self.db.session() as session:
            row = session.get(CapabilityDimension, dimension)
            if row is not None:
                session.expunge(row)
            return row

    def effective(self, dimension: str) -> float:
        """p for a dimension: 0.5 if absent, dampened toward 0.5 when stale."""
        row = self._row(dimension)
        if row is None:
            return 0.5
        age = self.clock.now() - row.last_updated
        if age <= STALE_AFTER:
            return row.p
        weight = math.exp(-(age - STALE_AFTER) / STALE_AFTER)
        return 0.5 + (row.p - 0.5) * weight

    def update(self, dimension: str, r: float) -> float:
        """EMA update with feedback r in [0, 1]; return the new p."""
        alpha = self.alpha
        now = self.clock.now()
        with self.db.session(write=True) as session:
            row = session.get(CapabilityDimension, dimension)
            if row is None:
                row = CapabilityDimension(dimension=dimension, p=0.5, samples=0, last_updated=now)
            row.p = row.p + alpha * (r - row.p)
            row.samples += 1
            row.last_updated = now
            session.add(row)
            return row.p

    def record(self, dimension: str, signal: str) -> float:
        """Apply a named feedback signal (up, down, correction, escalation)."""
        return self.update(dimension, FEEDBACK[signal])

    def all(self) -> list[dict]:
        """Every dimension with its stored and effective p and staleness."""
        now = self.clock.now()
        with self.db.session() as session:
            rows = list(session.exec(select(CapabilityDimension)))
            for r in rows:  # the commit on exit would expire them, unreadable afterwards
                session.expunge(r)
        return [
            {
                "dimension": r.dimension,
                "p": round(r.p, 3),
                "effective": round(self.effective(r.dimension), 3),
                "samples": r.samples,
                "last_updated": r.last_updated.isoformat(),
                "stale": now - r.last_updated > STALE_AFTER,
            }
            for r in rows
        ]

    def gate(self, classification: Classification) -> GateDecision:
        """Choose the starting tier: one higher when c < θ."""
        lam = self.gate_lambda
        c_verbal = classification.confidence
        c_profile = self.effective(dimension_of(classification))
        c = lam * c_verbal + (1 - lam) * c_profile
        tier = classification.start_tier
        raised = c < self.gate_theta and tier != "PRO"
        return GateDecision(higher(tier) if raised else tier, c, c_verbal, c_profile, raised)
