"""Promotion paths, run as jobs, producing proposals (never silent writes):
episodic → semantic when a pattern recurs ≥ 3 times; semantic → procedural when
observations ≥ 5 and confidence ≥ 0.90."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.learning.candidates import Candidate
from core.learning.consent import Consent, ConsentRefused
from core.storage.models import MemoryEntry

if TYPE_CHECKING:
    from core.services import Services

RECURRENCE = 3
OBSERVATIONS = 5
CONFIDENCE = 0.90
CLUSTER_SIMILARITY = 0.6  # calibrated, statement pairs


def _already_proposed(services: Services, key: str) -> bool:
    return services.proposals.promotion_filed(key)


def _active(services: Services, tier: str) -> tuple[list[MemoryEntry], int]:
    """Active entries of a tier, except those consent withholds (never material for a job),
    and how many were withheld."""
    rows = services.memory.in_tier(tier)
    withheld = Consent.of(services).withheld_entries(rows)
    return [r for r in rows if r.uuid not in withheld], len(withheld)


def _clusters(services: Services, entries: list[MemoryEntry]) -> list[list[MemoryEntry]]:
    """Groups of episodic entries about the same recurring thing (shared event type or close)."""
    groups: list[list[MemoryEntry]] = []
    by_type: dict[str, list[MemoryEntry]] = {}
    loose = []
    for e in entries:
        event_type = (e.attributes or {}).get("event_type")
        (by_type.setdefault(event_type, []) if event_type else loose).append(e)
    groups.extend(by_type.values())
    if loose:
        vectors = services.vectors.get_vectors("memory", [e.uuid for e in loose])
        calibrate = services.embedder.calibrate
        import numpy as np

        assigned: set[str] = set()
        for e in loose:
            if e.uuid in assigned or e.uuid not in vectors:
                continue
            base = np.asarray(vectors[e.uuid])
            group = [e]
            assigned.add(e.uuid)
            for other in loose:
                if other.uuid in assigned or other.uuid not in vectors:
                    continue
                sim = calibrate(float(np.dot(base, np.asarray(vectors[other.uuid]))), "pair")
                if sim >= CLUSTER_SIMILARITY:
                    group.append(other)
                    assigned.add(other.uuid)
            groups.append(group)
    return [g for g in groups if len(g) >= RECURRENCE]


async def promote(services: Services) -> dict[str, Any]:
    """Run both promotion paths; return how many proposals each produced."""
    learner = services.learner
    to_semantic = to_procedural = blocked = 0
    episodic, withheld_episodes = _active(services, "episodic")
    semantic, withheld_facts = _active(services, "semantic")
    for group in _clusters(services, episodic):
        key = "episodic:" + ",".join(sorted(e.memory_id for e in group))
        if _already_proposed(services, key):
            continue
        dates = sorted((e.valid_from or e.created_at).date().isoformat() for e in group)
        head = max(group, key=lambda e: e.confidence)
        candidate = Candidate(
            text=f"Recurring pattern: {head.canonical_text} (seen {len(group)} times: {', '.join(dates)})",
            kind="pattern",
            tier="semantic",
            topics=sorted({t for e in group for t in e.topics})[:6],
            importance=max(e.importance for e in group),
            confidence=min(0.95, 0.5 + 0.1 * len(group)),
            authority="job",
            reason=f"episodic pattern recurring {len(group)} times",
        )
        if await _submit(learner, candidate, key, group):
            to_semantic += 1
        else:
            blocked += 1
    for entry in semantic:
        if entry.observations < OBSERVATIONS or entry.confidence < CONFIDENCE:
            continue
        key = f"semantic:{entry.memory_id}"
        if _already_proposed(services, key):
            continue
        candidate = Candidate(
            text=entry.canonical_text,
            kind="constraint" if entry.kind in ("fact", "pattern") else entry.kind,
            tier="procedural",
            topics=entry.topics,
            importance=min(5, entry.importance + 1),
            confidence=entry.confidence,
            authority="job",
            reason=f"observed {entry.observations} times at confidence {entry.confidence:.2f}",
        )
        if await _submit(learner, candidate, key, [entry]):
            to_procedural += 1
        else:
            blocked += 1
    return {
        "episodic_to_semantic": to_semantic,
        "semantic_to_procedural": to_procedural,
        "blocked_by_consent": blocked,
        "withheld_by_consent": withheld_episodes + withheld_facts,
    }


async def _submit(learner, candidate: Candidate, key: str, sources: list[MemoryEntry]) -> bool:
    """File a promotion; False when a never-store rule refuses it."""
    # The entries promoted from are the evidence, not rivals: compared with them, a promotion
    # would read as their duplicate and its approval would only confirm them.
    # Its roots travel with it: approving links the new entry to each (core.learning.review).
    extra = {"promotion_key": key, "promoted_from": [e.memory_id for e in sources]}
    try:
        await learner.submit(
            candidate, origin="promotion", exclude_uuids=[e.uuid for e in sources], extra=extra
        )
    except ConsentRefused:
        return False
    return True
