"""How a candidate relates to the closest existing entry: nothing destroys what was known.

duplicate (confirm: observations + 1, confidence up), contradict (both kept, flagged),
supersede (old gets valid_to and a link, stays as history), deprecate, or time_limit.
Heuristics decide first; a LITE model is asked when they cannot tell and one is configured.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Literal

from core.errors import EloraError
from core.recall.lexical import fold, terms

if TYPE_CHECKING:
    from core.storage.models import MemoryEntry

log = logging.getLogger(__name__)

Relation = Literal["duplicate", "contradict", "supersede", "deprecate", "time_limit", "none"]
RELATIONS = ("duplicate", "contradict", "supersede", "deprecate", "time_limit", "none")
RELATED = 0.5  # calibrated (pair) similarity above which a candidate is compared
DUPLICATE = 0.9

_DEPRECATE = re.compile(
    r"\b(no longer|not anymore|any ?more|stopped|quit|n'est plus|ne \w+ plus|plus jamais|"
    r"j'ai arrete|arrete de|abandonne)\b"
)
_TIME_LIMIT = re.compile(
    r"\b(until|till|for now|temporarily|this (?:week|month) only|jusqu'(?:a|au|en)|pour l'instant|"
    r"temporairement|provisoirement|pour le moment)\b"
)
_SUPERSEDE = re.compile(
    r"\b(now|new|moved|changed|switched|instead|actually|from now on|maintenant|desormais|nouveau|"
    r"nouvelle|a change|demenage|finalement|en fait|plutot|dorenavant)\b"
)
_NEGATION = re.compile(r"\b(?:not|never|no|ne|pas|jamais|aucun|aucune)\b|n't\b|\bn'")
_SLOT = re.compile(r"^(.{3,60}?)\s+(?:is|are|was|est|sont|=|:)\s+(.+)$")


def _norm(text: str) -> str:
    return re.sub(r"[^\w ]+", "", fold(text)).strip()


def _slot(text: str) -> tuple[str, str] | None:
    m = _SLOT.match(_norm(text))
    return (m.group(1).strip(), m.group(2).strip()) if m else None


def _substitutes(new: str, old: str) -> bool:
    """Whether each text has distinctive words the other lacks (a changed value, not a rewording
    that only adds detail): embeddings score "dentist is Dr Benali" and "dentist is Dr Morel"
    as near-identical, so similarity alone cannot call them duplicates."""
    new_terms, old_terms = set(terms(new)), set(terms(old))
    return bool(new_terms - old_terms) and bool(old_terms - new_terms)


def _cue(pattern: re.Pattern, new: str, old: str) -> bool:
    """A change cue counts only when the new text has it and the old one does not."""
    return bool(pattern.search(new)) and not pattern.search(old)


def heuristic_relation(candidate: str, entry: MemoryEntry, similarity: float) -> Relation | None:
    """The relation when the words make it clear; None when unsure.

    Cues of change come before similarity: a high embedding similarity says two statements are
    about the same thing, not that they agree.
    """
    new, old = _norm(candidate), _norm(entry.canonical_text)
    if new == old:
        return "duplicate"
    folded = fold(candidate).replace("’", "'")
    folded_old = fold(entry.canonical_text).replace("’", "'")
    if _cue(_DEPRECATE, folded, folded_old):
        return "deprecate"
    if _cue(_TIME_LIMIT, folded, folded_old):
        return "time_limit"
    slots = _slot(candidate), _slot(entry.canonical_text)
    same_slot = slots[0] and slots[1] and slots[0][0] == slots[1][0] and slots[0][1] != slots[1][1]
    if _cue(_SUPERSEDE, folded, folded_old) and (same_slot or similarity >= RELATED):
        return "supersede"
    # On the folded text: normalising strips apostrophes, and with them "doesn't" and "n'est".
    if bool(_NEGATION.search(folded)) != bool(_NEGATION.search(folded_old)):
        return "contradict"
    if same_slot:
        return "contradict"
    if similarity >= DUPLICATE and not _substitutes(new, old):
        return "duplicate"
    return None


async def classify_relation(
    candidate: str, entry: MemoryEntry, similarity: float, model=None
) -> tuple[Relation, str]:
    """(relation, how it was decided): heuristics, then the LITE model, then similarity alone."""
    found = heuristic_relation(candidate, entry, similarity)
    if found is not None:
        return found, "heuristic"
    if model is not None:
        from core.prompts import render

        prompt = render("contradiction", new=candidate, old=entry.canonical_text)
        try:
            reply = await model.complete_text("LITE", [{"role": "user", "content": prompt}])
            start, end = reply.find("{"), reply.rfind("}")
            relation = json.loads(reply[start : end + 1]).get("relation")
            if relation in RELATIONS:
                return relation, "model"
            log.warning("contradiction model answered an unknown relation: %r", relation)
        except (EloraError, ValueError, AttributeError) as exc:
            log.warning("contradiction model failed: %s", exc)
    if similarity >= 0.8:
        # Without a model, a changed value is flagged for the reviewer (both kept) rather than
        # folded into the old entry as a confirmation, which would drop the new statement.
        substituted = _substitutes(_norm(candidate), _norm(entry.canonical_text))
        return ("contradict" if substituted else "duplicate"), "similarity"
    return "none", "similarity"
