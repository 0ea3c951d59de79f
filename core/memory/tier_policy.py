"""Each memory tier's own retrieval policy: which recalled entries to keep and how much to boost them.

episodic by date and event type; semantic by topic tags and a confidence floor; procedural by
rule/trigger match; personalized by domain; environment by sub-bucket.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.recall.lexical import fold
from core.recall.timeparse import TimeWindow
from core.storage.models import MemoryEntry

SEMANTIC_MIN_CONFIDENCE = 0.5
MATCH_BOOST = 1.15


@dataclass(frozen=True)
class Verdict:
    """Keep the entry or not, its score factor, and why."""

    keep: bool
    factor: float = 1.0
    reason: str = ""


def _matches(values, terms: set[str]) -> str | None:
    for value in values:
        folded = fold(str(value))
        if not folded:  # an absent attribute ("") is a substring of every term: not a match
            continue
        if any(t in folded or folded in t for t in terms if len(t) > 2):
            return str(value)
    return None


def _moment(entry: MemoryEntry):
    return entry.valid_from or entry.created_at


def judge(entry: MemoryEntry, terms: set[str], window: TimeWindow | None) -> Verdict:
    """Apply the policy of the entry's tier to one candidate."""
    attrs = entry.attributes or {}
    if entry.tier == "episodic":
        if (
            window is not None
            and (window.start or window.end)
            and not window.contains(_moment(entry))
        ):
            return Verdict(False, reason=f"outside {window.label}")
        hit = _matches([attrs.get("event_type", ""), *entry.topics], terms)
        return Verdict(
            True, MATCH_BOOST if hit else 1.0, f"event type {hit}" if hit else "dated trace"
        )
    if entry.tier == "semantic":
        if entry.confidence < SEMANTIC_MIN_CONFIDENCE:
            return Verdict(False, reason=f"confidence {entry.confidence:.2f} below floor")
        hit = _matches(entry.topics, terms)
        return Verdict(True, MATCH_BOOST if hit else 1.0, f"topic {hit}" if hit else "")
    if entry.tier == "procedural":
        triggers = attrs.get("triggers") or attrs.get("trigger") or []
        if isinstance(triggers, str):
            triggers = [triggers]
        hit = _matches([*triggers, *entry.topics], terms)
        return Verdict(True, MATCH_BOOST if hit else 1.0, f"trigger {hit}" if hit else "")
    if entry.tier == "personalized":
        hit = _matches([attrs.get("domain", ""), *entry.topics], terms)
        return Verdict(True, MATCH_BOOST if hit else 1.0, f"domain {hit}" if hit else "")
    if entry.tier == "environment":
        hit = _matches([attrs.get("bucket", ""), *entry.topics], terms)
        return Verdict(True, MATCH_BOOST if hit else 1.0, f"bucket {hit}" if hit else "")
    return Verdict(True)
