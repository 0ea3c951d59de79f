"""Consent: "don't remember this" silences a turn; "never store X" becomes a standing rule."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import InvalidInput
from core.recall.lexical import fold, terms

if TYPE_CHECKING:
    from core.services import Services

_DONT_REMEMBER = re.compile(
    r"(ne (le |la |les )?retiens pas|ne retiens rien|n'enregistre pas|ne (le |la )?memorise pas|"
    r"ne garde pas (ca|cela|ceci)|oublie (ca|cela|ce que je viens)|c'est confidentiel|"
    r"don'?t (remember|save|store|keep|record|memori[sz]e) (this|that|it)|do not (remember|save|store|keep|record) "
    r"(this|that|it)|off the record|forget (i said|what i just said) (this|that)?|between us)"
)
# An instruction, so at the start of a clause: "I never remember names" is not one.
_NEVER_STORE = re.compile(
    r"(?:^|[.!?;:,]\s*)(?:please\s+|s'il te plait,?\s+|stp,?\s+)?"
    r"(?:never (?:store|remember|save|keep|record)|don'?t ever (?:store|remember|save|keep)|"
    r"ne (?:retiens|stocke|garde|memorise|enregistre) jamais|n'enregistre jamais)\s+"
    r"(?:anything (?:about|on|regarding)\s+|rien (?:sur|de|a propos de|concernant)\s+|"
    r"(?:mes|my|les|the|des)\s+)?([^.!?;]{2,80}?)\s*(?:[.!?;]|$)"
)


# ", d'accord ?" / ", please" after the subject is politeness, not part of it.
_TAG = re.compile(
    r",\s*(?:ok|okay|d'accord|please|stp|s'il te plait|merci|thanks|got it|understood|compris|"
    r"tu veux bien|ca marche|right)\b.*$"
)


class ConsentRefused(InvalidInput):
    """A candidate touches a subject the operator asked never to store."""


@dataclass(frozen=True)
class ConsentVerdict:
    """What the operator's words allow for this turn."""

    suppress_turn: bool = False
    never_store: str | None = None


def read_consent(text: str) -> ConsentVerdict:
    """Detect "don't remember this" and "never store X" (French and English)."""
    folded = fold(text).replace("’", "'")
    never = _NEVER_STORE.search(folded)
    if never:
        subject = _TAG.sub("", never.group(1)).strip(" .,'\"")
        return ConsentVerdict(suppress_turn=True, never_store=subject)
    return ConsentVerdict(suppress_turn=bool(_DONT_REMEMBER.search(folded)))


def add_never_store_rule(services: Services, subject: str, capture_id: str | None = None):
    """Record the standing rule as a procedural constraint (an explicit command is an approval)."""
    from core.memory.api import remember

    slug = "-".join(terms(subject)[:4]) or "subject"
    sources = [{"capture_id": capture_id, "origin": "operator"}] if capture_id else None
    return remember(
        services,
        f"Never store anything about: {subject}",
        kind="constraint",
        tier="procedural",
        importance=4,
        topics=["consent", *terms(subject)[:3]],
        memory_id=f"rule.never-store.{slug}"[:110],
        sources=sources,
        attributes={"consent": "never_store", "pattern": subject, "triggers": terms(subject)},
    )


_LIST = re.compile(r",|;|\b(?:and|or|et|ou|nor|ni)\b")


def never_store_patterns(services: Services) -> list[list[str]]:
    """The folded terms of every active never-store rule; "my health or my bank" is two."""
    # Only the rules' attributes, prefiltered in SQL: loading every active procedural entry
    # as an object cost tens of milliseconds per exchange on a large memory (and stopped at 500).
    rows = services.db.rows(
        "SELECT attributes FROM memory_entries WHERE tier = 'procedural' AND status = 'active' "
        "AND attributes LIKE '%never_store%'"
    )
    attributes = [json.loads(a) if isinstance(a, str) else (a or {}) for (a,) in rows]
    subjects = [a.get("pattern", "") for a in attributes if a.get("consent") == "never_store"]
    return [t for s in subjects for part in _LIST.split(fold(s)) if (t := terms(part))]


def blocked_by_rule(text: str, patterns: list[list[str]]) -> bool:
    """Whether a candidate touches a never-store subject (all of a rule's terms appear)."""
    words = set(terms(text))
    folded = fold(text)
    return any(pattern and all(p in words or p in folded for p in pattern) for pattern in patterns)
