"""Classify a request: intent, complexity (→ starting tier), memory need and tiers to search.

Cheap French/English heuristics first; a LITE model is asked only when they are unsure.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from core.memory.vocabulary import MEMORY_TIERS, MemoryTier
from core.recall.lexical import fold
from core.recall.timeparse import TimeWindow, parse_period

log = logging.getLogger(__name__)

Intent = Literal["chitchat", "question_about_past", "task", "command", "document"]
MemoryNeed = Literal["none", "L0-L1", "L2", "L3"]
MODEL_THRESHOLD = 0.6

_CHITCHAT = re.compile(
    r"^(salut|bonjour|bonsoir|coucou|hello|hi|hey|yo|merci( beaucoup)?|thanks?( you)?|thx|ok|okay|"
    r"d'accord|super|cool|top|parfait|great|nice|bonne nuit|good night|good morning|a plus|"
    r"bye|ciao|lol|haha|ca va\s?\??|how are you\??|comment ca va\s?\??)[ !.?]*$"
)
_PAST = re.compile(
    r"\b(did i|have i|had i|when did|what did (i|we)|where did|who did|remember when|do you remember|"
    r"you remember|last time|previously|earlier|back when|already told|i told you|i said|we said|"
    r"we discussed|we talked|history of|est-ce que j'ai|ai-je|avais-je|quand (est-ce que )?(j'ai|on a|nous avons)|"
    r"qu'est-ce que j'ai|qu'est-ce qu'on a|tu te souviens|te souviens-tu|tu te rappelles|la derniere fois|"
    r"deja dit|je t'ai dit|on a dit|on a parle|nous avons parle|on avait|j'avais|autrefois|precedemment)\b"
)
_RECALL = re.compile(
    r"\b(my|mine|our|mon|ma|mes|notre|nos|i|me|je|j'|moi|what's my|quel est mon|quelle est ma)\b"
)
_QUESTION = re.compile(
    r"(\?\s*$|^(what|which|who|whom|whose|where|when|how|why|is|are|do|does|quel|quelle|quels|"
    r"quelles|qui|ou|quand|comment|pourquoi|combien|est-ce)\b)"
)
_BROAD = re.compile(
    r"\b(everything|all (that|what|the times)|summari[sz]e|overview|timeline|whole history|each time|"
    r"every time|tout ce que|toutes les fois|resume|recapitule|historique complet|chaque fois|"
    r"chronologie|bilan)\b"
)
_TASK = re.compile(
    r"^(please |peux-tu |pourrais-tu |can you |could you |would you )?(write|draft|plan|code|build|"
    r"make|create|translate|summari[sz]e|analy[sz]e|compare|explain|design|fix|debug|review|list|"
    r"prepare|compute|calculate|ecris|redige|planifie|prepare|fais|cree|traduis|resume|analyse|"
    r"compare|explique|concois|corrige|liste|calcule|propose|organise|aide-moi|help me)\b"
)
_HARD = re.compile(
    r"\b(architecture|strategy|strategie|prove|proof|demontre|theorem|trade-?offs?|in depth|en profondeur|"
    r"step by step|etape par etape|multi-?step|business plan|legal|juridique|contract|contrat|"
    r"research|recherche approfondie|optimi[sz]e|refactor|algorithm|algorithme|philosoph)\w*"
)


def _cue(words: str, phrases: tuple[str, ...] = ()) -> re.Pattern:
    """Whole words (with the plural/conjugated endings written out), never bare prefixes.

    `words` is split on whitespace; each of `phrases` is matched as a whole, so "il y a" does
    not shrink to "il" (which "qu'il faut" would match).
    """
    alternatives = [re.escape(w) for w in words.split()]
    alternatives += [r"\s+".join(re.escape(w) for w in p.split()) for p in phrases]
    return re.compile(r"\b(" + "|".join(alternatives) + r")\b")


_TIER_CUES: dict[str, re.Pattern] = {
    "personalized": _cue(
        "prefer prefers preferred preference preferences favourite favorite like likes love loves "
        "hate hates dislike dislikes style tone aime aimes adore adores deteste prefere preferes "
        "preferee prefered favori favoris favorite favorites gout gouts habitude habitudes"
    ),
    "procedural": _cue(
        "rule rules always never procedure process decided decision decisions constraint "
        "constraints must regle regles toujours jamais dois-je faut-il decide decidee contrainte "
        "contraintes interdit interdite",
        phrases=("should i", "how do i usually"),
    ),
    "episodic": _cue(
        "when date yesterday last ago happened appointment appointments meeting meetings event "
        "events trip moved quand hier dernier derniere rendez-vous reunion reunions evenement "
        "voyage demenage demenagement demenager",
        phrases=("il y a",),
    ),
    "environment": _cue(
        "server servers tool tools command commands terminal build deploy deployment error errors "
        "crash workspace script scripts repo repository api serveur serveurs outil outils commande "
        "commandes erreur erreurs plantage deploiement config configuration"
    ),
}


@dataclass
class Classification:
    """What a request is and what it needs; typed, serialisable, used by routing and recall."""

    intent: Intent
    complexity: Literal["low", "medium", "high"]
    start_tier: Literal["LITE", "FLASH", "PRO"]
    memory_need: MemoryNeed
    tiers: list[str]
    confidence: float
    reasons: list[str] = field(default_factory=list)
    source: Literal["heuristic", "model"] = "heuristic"
    time_window: TimeWindow | None = None
    present_state: bool = False  # asks how something is now: the latest statement wins

    def to_json(self) -> dict[str, Any]:
        """Plain data for traces and the pack contract."""
        return {
            "intent": self.intent,
            "complexity": self.complexity,
            "start_tier": self.start_tier,
            "memory_need": self.memory_need,
            "tiers": self.tiers,
            "confidence": round(self.confidence, 2),
            "reasons": self.reasons,
            "source": self.source,
            "time_window": self.time_window.to_json() if self.time_window else None,
            "present_state": self.present_state,
        }


# How something is now ("what's Hugo's number?", "quel est le véto de Pixel ?", "where do we
# have lunch?", "comment s'appelle le chien de Sam ?": a name is a value too): a question in
# the present, not about the past or a period.
_PRESENT = re.compile(
    r"^(what|who|whom|whose|where|when|which|how much|how many|how often|how do|how does|how can)\b"
    r"|\b(c'est|quel|quelle|quels|quelles|qui|ou|quand|combien|que|quoi|qu'est-ce)\b"
    r"|\bcomment( \w+)? (s'|t'|m')appell?e(s|nt)?\b"
)
_PAST_TENSE = re.compile(
    r"\b(did|was|were|had|used to|ago|before|previous|previously|former|formerly|old|last time|"
    r"earlier|first time|at first|originally|avant|ancien|ancienne|anciens|autrefois|"
    r"precedent|precedente|avait|avais|etait|etais|etaient|a-t-il|a-t-elle|ai-je|j'ai|on a|"
    r"as-tu|avez-vous|t'ai|m'a|m'as|il y a)\b"
    r"|\b(has|have|had) (\w+ )?(been|gone|done|had|seen|read|made|visited|bought|painted|taken|"
    r"met|tried|started|finished|attended|participated|faced|learned|received|said|told|lost|got|"
    r"left|won|found|sold|built|brought|kept|become|changed)\b"
    # any regular past participle after has/have/had ("where has Melanie camped?", "the studio
    # Jon has opened"), but not a word after an article ("what do we have a shared account for?")
    r"|\b(has|have|had) (?!(?:a|an|the|my|your|our|his|her|its|their|some|any|no)\b)(\w+ )?"
    r"\w{3,}ed\b"
    r"|^(what|who|which)( \w+)? \w+ed\b"
)


# A question whose answer gathers several statements ("what activities has Maria done with
# her church friends?", "which cities has Jon visited?", "how many times…", "what do Jon and
# Gina both have in common?"): every mention counts, not only the latest one.
_AGGREGATE = re.compile(
    r"^(what|which)( [\w+'-]+){0,3}? (?!(?:is|was|has|does|its|this|his|us|as|yes)\b)\w+s "
    r"(has|have|had|did|does|do|is|are|was|were|can)\b"
    r"|\b(how many|how often|both|in common|all the|every time|each time|so far|ever|"
    r"combien de fois|en commun|tous les deux|toutes les deux|les deux|a chaque fois|"
    r"quels sont tous|quelles sont toutes)\b"
)


def _folded(text: str) -> str:
    """A message as the cue patterns read it: folded, with typographic apostrophes plain."""
    return fold(text.strip()).replace("’", "'")


def is_chitchat(text: str) -> bool:
    """Whether the whole message is a greeting or an acknowledgement ("merci !", "ok", "salut")."""
    return _CHITCHAT.match(_folded(text)) is not None


def asks_aggregate(folded: str) -> bool:
    """Whether a (folded) question gathers several statements (a list, a count, a comparison)."""
    return bool(_AGGREGATE.search(folded))


def asks_present_state(folded: str, window: TimeWindow | None) -> bool:
    """Whether a (folded) question asks how something is now, where the latest value wins."""
    if window is not None or _PAST.search(folded) or _PAST_TENSE.search(folded):
        return False
    if asks_aggregate(folded):
        return False
    return bool(_PRESENT.search(folded)) and ("?" in folded or bool(_QUESTION.search(folded)))


_TIER_OF = {"low": "LITE", "medium": "FLASH", "high": "PRO"}


def classify(text: str, now: datetime, *, has_document: bool = False) -> Classification:
    """Heuristic classification in French and English; `confidence` says how sure it is."""
    raw = text.strip()
    q = _folded(raw)
    reasons: list[str] = []
    window = parse_period(raw, now)
    words = len(q.split())

    if has_document:
        intent, confidence = "document", 0.9
        reasons.append("a document is attached")
    elif raw.startswith("/"):
        intent, confidence = "command", 0.95
        reasons.append("slash command")
    elif _CHITCHAT.match(q):
        intent, confidence = "chitchat", 0.9
        reasons.append("greeting or acknowledgement")
    elif _PAST.search(q) or (window is not None and "?" in raw):
        intent, confidence = "question_about_past", 0.8
        reasons.append("refers to the past" + (f" ({window.label})" if window else ""))
    elif _TASK.search(q):
        intent, confidence = "task", 0.75
        reasons.append("imperative task verb")
    elif _QUESTION.search(q):
        intent, confidence = "task", 0.65 if words >= 3 else 0.5
        reasons.append("a question with no past reference")
    else:
        intent, confidence = "task", 0.45
        reasons.append("no strong cue")

    hard = _HARD.findall(q)
    if intent in ("chitchat", "command"):
        complexity = "low"
    elif len(hard) >= 2 or (hard and words > 60):
        complexity = "high"
        reasons.append("demanding task: " + ", ".join(sorted(set(hard))[:3]))
    elif hard or words > 80 or intent == "document":
        complexity = "medium"
    else:
        complexity = "low"

    tiers = [t for t, cue in _TIER_CUES.items() if cue.search(q)]
    if window is not None and "episodic" not in tiers:
        tiers.append("episodic")
    personal = bool(_RECALL.search(q))
    if intent == "chitchat" or intent == "command":
        memory_need = "none"
    elif intent == "question_about_past":
        memory_need = "L3" if _BROAD.search(q) or (window and window.anchor) else "L2"
    elif personal and _BROAD.search(q):
        memory_need = "L3"
    elif intent == "task" and _QUESTION.search(q) and words >= 3:
        memory_need = "L2"  # a question may be about something memory knows: look, cheaply
    elif personal or tiers:
        memory_need = "L2" if personal and words > 3 else "L0-L1"
    else:
        memory_need = "L0-L1"
    if memory_need in ("L2", "L3") and not tiers:
        tiers = ["semantic", "episodic", "personalized", "procedural"]
    return Classification(
        intent=intent,
        complexity=complexity,
        start_tier=_TIER_OF[complexity],
        memory_need=memory_need,
        tiers=[t for t in MEMORY_TIERS if t in tiers],
        confidence=confidence,
        reasons=reasons,
        time_window=window,
        present_state=asks_present_state(q, window),
    )


class TextModel(Protocol):
    """The slice of the LLM client the classifier needs (wired in core.routing)."""

    async def complete_text(self, tier: str, messages: list[dict[str, Any]]) -> str: ...


class _ModelVerdict(BaseModel):
    intent: Intent
    complexity: Literal["low", "medium", "high"]
    memory_need: MemoryNeed
    tiers: list[MemoryTier]
    confidence: float = Field(ge=0, le=1)


async def classify_request(
    text: str, now: datetime, *, model: TextModel | None = None, has_document: bool = False
) -> Classification:
    """Heuristics first; ask the LITE model only when they are unsure and a model is configured."""
    guess = classify(text, now, has_document=has_document)
    if model is None or guess.confidence >= MODEL_THRESHOLD:
        return guess
    from core.prompts import render

    prompt = render("classifier", message=text)
    try:
        reply = await model.complete_text("LITE", [{"role": "user", "content": prompt}])
        verdict = _ModelVerdict.model_validate(json.loads(_json_part(reply)))
    except (ValueError, ValidationError) as exc:
        guess.reasons.append(f"model classifier output rejected: {str(exc)[:80]}")
        return guess
    return Classification(
        intent=verdict.intent,
        complexity=verdict.complexity,
        start_tier=_TIER_OF[verdict.complexity],
        memory_need=verdict.memory_need,
        tiers=[t for t in MEMORY_TIERS if t in verdict.tiers],
        confidence=verdict.confidence,
        reasons=[*guess.reasons, "heuristics unsure: LITE model classified"],
        source="model",
        time_window=guess.time_window,
        present_state=guess.present_state,
    )


def _json_part(reply: str) -> str:
    """The JSON object inside a reply that may wrap it in prose or a code fence."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return reply[start : end + 1]
