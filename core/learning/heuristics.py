"""The extractor that needs no model: explicit "remember" statements, first-person preferences,
decisions, constraints, facts about oneself and dated events, in French and English."""

from __future__ import annotations

import re

from core.learning.candidates import Candidate
from core.recall.lexical import fold

_EXPLICIT = re.compile(
    r"^(?:.*?[,.;!]\s+)?(?:please\s+|stp\s+|s'il te plait\s+)?(?:"
    r"(?:remember|souviens[- ]toi|rappelle[- ]toi|retiens|n'oublie pas|don't forget|do not forget)"
    r"\s*(?:that|que|qu'|:)?|(?:note|keep in mind|note bien|garde en memoire|prends note)"
    r"\s*(?:that|que|qu'|:))\s*(.{3,}[^?\s])\s*$"
)
_PREFERENCE = re.compile(
    r"\b(i (?:really |much |do )?(?:prefer|like|love|hate|dislike|enjoy|can't stand|cannot stand)|"
    r"i'd rather|my favou?rite|i'm (?:a )?(?:vegetarian|vegan)|i don't (?:like|eat|drink)|"
    r"j'(?:adore|aime|prefere|deteste)|je (?:prefere|deteste|n'aime pas|n'aime|ne mange pas|ne bois pas|"
    r"suis (?:vegetarien|vegetarienne|vegan|vegane))|(?:mon|ma|mes) .{2,30} (?:prefere|preferee|preferes|preferees)|"
    r"reponds?[- ]moi (?:en|toujours|plutot)|answer me (?:in|briefly)|call me|appelle[- ]moi)\b"
)
_DECISION = re.compile(
    r"\b(i(?:'ve| have)? decided|we(?:'ve| have)? decided|i'm going to|from now on|going forward|"
    r"we will go with|we chose|i chose|j'ai decide|on a decide|nous avons decide|desormais|"
    r"a partir de maintenant|dorenavant|on part sur|j'ai choisi|on a choisi)\b"
)
_CONSTRAINT = re.compile(
    r"\b(i(?:'m| am) allergic|i can't (?:eat|drink|work|do|travel)|i cannot|never (?:book|schedule|call|send|use)|"
    r"always (?:book|schedule|cc|send|use|check)|must not|no meetings|je suis allergique|"
    r"je ne peux pas|jamais (?:de|le|la|les|avant|apres)|toujours (?:mettre|envoyer|verifier|utiliser)|"
    r"pas de reunion|il ne faut (?:jamais|pas))\b"
)
_FACT = re.compile(
    r"\b(my (?:\w+ ){0,2}(?:is|are|was|lives|works) |i live in|i work (?:at|for|on)|i was born|i have (?:a|two|three) |"
    r"(?:mon|ma|mes) (?:\w+ ){0,2}(?:est|sont|s'appelle|s'appellent|habite|habitent|travaille) |j'habite|je vis a|je travaille "
    r"(?:chez|a|pour|sur)|je suis ne|j'ai (?:un|une|deux|trois) )"
)
_EVENT = re.compile(
    r"\b(i (?:moved|started|quit|finished|signed|got married|graduated|booked)|we (?:moved|signed|launched|shipped)|"
    r"j'ai (?:demenage|commence|quitte|fini|signe|reserve)|on a (?:demenage|signe|lance|livre)|"
    r"nous avons (?:demenage|signe|lance)|je demenage|we're moving|i'm moving)\b"
)
_QUESTION = re.compile(r"\?\s*$|^(?:est-ce|do you|did you|can you|could you|peux-tu|pourrais-tu)\b")


def _clean(text: str) -> str:
    text = text.strip().strip("\"'«» ")
    return text[0].upper() + text[1:] if text else text


def heuristic_candidates(text: str, capture_id: str | None = None) -> list[Candidate]:
    """Candidates found in one operator message (at most one per message)."""
    raw = " ".join(text.split())
    if len(raw) < 8 or len(raw) > 1000:
        return []
    folded = fold(raw).replace("’", "'")
    sources = [capture_id] if capture_id else []

    explicit = _EXPLICIT.match(folded)
    if explicit:
        start = len(raw) - len(explicit.group(1))
        body = _clean(raw[start:])
        kind = _kind_of(fold(body))
        return [
            Candidate(text=body, kind=kind, importance=3, confidence=0.95, authority="operator",
                      source_capture_ids=sources, reason="explicit remember statement")
        ]  # fmt: skip
    if _QUESTION.search(folded):
        return []
    kind = None
    if _CONSTRAINT.search(folded):
        kind, reason = "constraint", "first-person constraint"
    elif _DECISION.search(folded):
        kind, reason = "decision", "decision"
    elif _PREFERENCE.search(folded):
        kind, reason = "preference", "first-person preference"
    elif _EVENT.search(folded):
        kind, reason = "event", "dated personal event"
    elif _FACT.search(folded):
        kind, reason = "fact", "fact about the operator"
    if kind is None:
        return []
    return [
        Candidate(text=_clean(raw), kind=kind, importance=2, confidence=0.7, authority="heuristic",
                  source_capture_ids=sources, reason=reason,
                  temporality="dated" if kind == "event" else "permanent")
    ]  # fmt: skip


def _kind_of(folded: str) -> str:
    if _CONSTRAINT.search(folded):
        return "constraint"
    if _DECISION.search(folded):
        return "decision"
    if _PREFERENCE.search(folded):
        return "preference"
    if _EVENT.search(folded):
        return "event"
    return "fact"
