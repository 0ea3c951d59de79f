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
# Environment predictions serve the task they are about: boosted when the question names their
# subject or sub-bucket, kept as they are when it asks what to expect, lowered otherwise.
UNRELATED_FACTOR = 0.85
# Words of a question asking what to expect (folded): durations, habits, outcomes.
EXPECTATION_WORDS = frozenset(
    ("combien", "temps", "delai", "delais", "habitude", "general", "toujours", "souvent",
     "attendre", "quand", "ouvert", "ferme", "long", "usually", "always", "often", "expect",
     "when", "open", "closed", "typically", "wait")
)  # fmt: skip
# A question's words that point at a sub-bucket without naming it.
BUCKET_CUES: dict[str, frozenset[str]] = {
    "documents": frozenset(("pdf", "scan", "document", "fichier", "file", "facture", "devis",
                            "export", "ocr", "contrat", "contract")),
    "tools": frozenset(("build", "deploy", "deploiement", "outil", "tool", "script", "modele",
                        "model", "escalade", "escalation", "staging")),
    "places": frozenset(("ouvert", "ferme", "open", "closed", "horaires", "hours", "lundi",
                         "monday", "dimanche", "sunday")),
    "services": frozenset(("service", "support", "api", "livraison", "delivery", "banque",
                           "bank", "fournisseur", "provider")),
    "people": frozenset(("repond", "repondre", "answer", "reply", "rappelle", "call")),
}  # fmt: skip


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
        return _environment(entry, terms)
    return Verdict(True)


def _environment(entry: MemoryEntry, terms: set[str]) -> Verdict:
    """A prediction counts when the task is about its subject or its sub-bucket."""
    attrs = entry.attributes or {}
    bucket = str(attrs.get("bucket") or "")
    subjects = [t for t in entry.topics if t != bucket]
    hit = _matches(subjects, terms)
    if hit:
        return Verdict(True, MATCH_BOOST, f"prediction about {hit}")
    if bucket and (_matches([bucket], terms) or terms & BUCKET_CUES.get(bucket, frozenset())):
        return Verdict(True, MATCH_BOOST, f"bucket {bucket}")
    if terms & EXPECTATION_WORDS:
        return Verdict(True, 1.0, "the question asks what to expect")
    return Verdict(True, UNRELATED_FACTOR, "prediction about something else")


def matching_predictions(
    entries: list[MemoryEntry], terms: set[str]
) -> list[tuple[MemoryEntry, Verdict]]:
    """The environment predictions a task names (their subject or sub-bucket), surest first:
    they travel with the task whatever its memory need (core.recall.pack, L1)."""
    found = []
    for entry in entries:
        verdict = _environment(entry, terms) if entry.tier == "environment" else None
        if verdict is not None and verdict.factor > 1.0:
            found.append((entry, verdict))
    return sorted(found, key=lambda pair: pair[0].confidence, reverse=True)
