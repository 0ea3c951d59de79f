"""Lessons from corrections: prescriptive rules ("When Camille asks for a summary, answer in
French in three sentences"), each with its evidence (the messages that corrected Elora).

With a model, one LITE prompt (prompts/reflexion.j2) writes them from the day's corrections
and 👎; its answer is validated, and an unusable answer is an error (LessonsFailed), never an
empty list. Without a model, structured patterns build a rule from what the correction says
("you forgot X" → "When asked about …, include X"); a correction no pattern reads is flagged
for review. Neither path ever proposes the operator's message itself as the rule.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import EloraError
from core.learning.attribution import about_speaker, looks_french
from core.memory.schema import text_key
from core.recall.lexical import STOPWORDS, fold

if TYPE_CHECKING:
    from core.services import Services

SUBJECT_WORDS = 5


class LessonsFailed(EloraError):
    """The model's lessons could not be used (malformed, out of schema, or no call possible)."""


@dataclass
class Correction:
    """One correction of Elora: what was asked, what Elora said, and how it was corrected."""

    capture_id: str
    text: str  # the correcting message; empty for a bare 👎 on the reply
    question: str  # the message Elora was answering
    reply: str  # Elora's reply
    speaker: str
    thumbs_down: bool = False
    message: dict[str, Any] = field(default_factory=dict)  # surface, chat_id, message_id


@dataclass
class Lesson:
    """A prescriptive rule and the corrections it comes from."""

    rule: str
    capture_ids: list[str]
    topics: list[str] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    by: str = "heuristic"


class _ModelLesson(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    rule: str = Field(min_length=12, max_length=400)
    evidence: list[int] = Field(min_length=1)
    topics: list[str] = Field(default_factory=list, max_length=8)
    triggers: list[str] = Field(default_factory=list, max_length=8)


class _ModelLessons(BaseModel):
    lessons: list[_ModelLesson]


# -- with a model --------------------------------------------------------------------------


async def model_lessons(services: Services, corrections: list[Correction]) -> list[Lesson]:
    """Ask the LITE model for rules; LessonsFailed when its answer cannot be used."""
    from core.prompts import render

    prompt = render("reflexion", corrections=corrections, operator=services.settings.operator_name)
    try:
        raw = await services.llm.complete_text("LITE", [{"role": "user", "content": prompt}])
    except EloraError as exc:  # no model reachable, or the spending cap
        raise LessonsFailed(f"no lessons this time: {exc}") from exc
    return parse_lessons(raw, corrections)


def parse_lessons(raw: str, corrections: list[Correction]) -> list[Lesson]:
    """Validate the model's JSON and map each lesson's evidence numbers to the messages."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end < start:
        raise LessonsFailed("the model's answer holds no JSON object")
    try:
        data = _ModelLessons.model_validate(json.loads(raw[start : end + 1]))
    except (ValueError, ValidationError) as exc:
        raise LessonsFailed(f"the model's lessons are out of schema: {str(exc)[:300]}") from None
    lessons = []
    for item in data.lessons:
        if any(not 1 <= n <= len(corrections) for n in item.evidence):
            raise LessonsFailed(f"a lesson cites a correction that does not exist: {item.evidence}")
        cited = [corrections[n - 1] for n in dict.fromkeys(item.evidence)]
        if any(text_key(item.rule) == text_key(c.text) for c in cited):
            continue  # the correction repeated back is no lesson
        lessons.append(Lesson(item.rule, [c.capture_id for c in cited], _tags(item.topics),
                              _tags(item.triggers), by="model"))  # fmt: skip
    return lessons


def _tags(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v.strip().lower() for v in values if v and v.strip()))[:8]


# -- without a model -----------------------------------------------------------------------

_END = re.compile(r"[\s,;:.!…]*(?:\b(?:again|encore|stp|please|s'il te plait|merci|thanks)\b[\s,;:.!…]*)*$", re.I)  # fmt: skip
_FORGOT = re.compile(
    r"\b(?:you forgot|you left out|you missed|tu as oubli[ée]|t'as oubli[ée]|tu oublies|"
    r"hai dimenticato)\s+(?:to\s+|de\s+|d'|di\s+)?(?P<x>.+)",
    re.I,
)
_STOP = re.compile(
    r"\b(?:(?P<stop>stop|quit)\s+(?P<x1>\w+ing\b.+)|(?:please\s+)?(?:don't|do not|never)\s+"
    r"(?P<x2>.+)|arr[êe]te(?:z)?\s+(?:de\s+|d')(?P<x3>.+)|smettila\s+di\s+(?P<x4>.+))",
    re.I,
)
_TOLD = re.compile(
    r"\b(?:i(?:'ve| have)? (?:already )?told you|i asked you|je t'(?:ai|avais) (?:d[ée]j[àa] )?"
    r"(?:dit|demand[ée])|je te l'(?:ai|avais) (?:d[ée]j[àa] )?dit|ti ho (?:gi[àa] )?detto)"
    r"\s*[,:]?\s*(?:to |that |de |d'|que |qu'|di |che )?(?P<x>.+)",
    re.I,
)
_WRONG = re.compile(
    r"^(?:(?:no|non|nope|wrong|faux|incorrect|not true|actually|sbagliato|errore)\b[\s,.:;!-]*)?"
    r"(?:(?:that's|that is|c'est|it's|[èe]|you're|tu te) ?(?:wrong|faux|incorrect|sbagliato|"
    r"not true|pas vrai|trompes?)\b[\s,.:;!-]*|(?:tu t'es tromp[ée]e?|you misunderstood|"
    r"non [èe] vero)\b[\s,.:;!-]*)?(?:i said|j'ai dit|ho detto)?[\s,:]*(?P<x>.+)",
    re.I,
)
_OPENS_WRONG = re.compile(
    r"^(?:no\b|non\b|nope\b|wrong\b|faux\b|incorrect\b|not true|actually\b|sbagliato|errore|"
    r"that's wrong|that is wrong|c'est faux|it's wrong|tu te trompes|tu t'es tromp|"
    r"you misunderstood|non [èe] vero|[èe] sbagliato)",
    re.I,
)


def heuristic_lesson(correction: Correction) -> Lesson | None:
    """A rule built from the correction's content, or None when no pattern reads it."""
    name = correction.speaker
    subject = question_subject(correction.question)
    french = _french(correction.text or correction.question)
    text = correction.text.strip()
    rule = None
    if not text:  # a bare 👎: the reply was wrong, not why
        if subject:
            rule = (
                f"Quand {name} demande « {subject} », vérifier la mémoire et les sources avant "
                "de répondre : une réponse à cette question a reçu 👎"
                if french
                else f"When {name} asks about “{subject}”, check memory and the sources before "
                "answering: a reply to this got a 👎"
            )
    elif m := _FORGOT.search(text):
        what = _part(m["x"])
        where = f"demande « {subject} »" if subject else "pose une question"
        rule = (
            f"Quand {name} {where}, inclure {what}"
            if french
            else f"When {name} asks {'about “' + subject + '”' if subject else 'a question'}, "
            f"include {what}"
        )
    elif (m := _TOLD.search(text)) and len(_part(m["x"]).split()) >= 2:
        what = _third_person(_part(m["x"]), name)
        rule = (
            f"Toujours, avec {name} : {what} ({name} a dû le redire)"
            if french
            else f"Always, with {name}: {what} ({name} had to say it again)"
        )
    elif m := _STOP.search(text):
        what = _part(m["x1"] or m["x2"] or m["x3"] or m["x4"])
        rule = (
            f"Avec {name}, ne plus jamais {what}"
            if french
            else f"When answering {name}, {'stop' if m['stop'] else 'never'} {what}"
        )
    elif _OPENS_WRONG.search(text) and (m := _WRONG.search(text)) and subject:
        what = _part(m["x"])
        if len(what) >= 3:
            rule = (
                f"Quand {name} demande « {subject} », tenir compte de sa correction : {what}"
                if french
                else f"When {name} asks about “{subject}”, use the corrected answer: {what}"
            )
    if rule is None or text_key(rule) == text_key(text):
        return None
    topics = [w.lower() for w in subject.split()][:SUBJECT_WORDS] if subject else []
    return Lesson(rule, [correction.capture_id], topics=_tags(topics), triggers=_tags(topics))


# Words that say "wrong", not what was asked (when the question was itself a correction).
_NOT_SUBJECT = frozenset(("non", "nope", "faux", "wrong", "incorrect", "sbagliato", "encore"))
_FRENCH_MARKS = re.compile(
    r"\b(?:arr[êe]te[sz]?|tu|t'|c'est|oubli[ée]e?|d[ée]j[àa]|fran[çc]ais)\b", re.I
)


def _french(text: str) -> bool:
    return looks_french(text) or bool(_FRENCH_MARKS.search(text))


def question_subject(question: str) -> str:
    """The few distinctive words of what was asked, in its own spelling ("Nordhaven demo")."""
    words = [re.sub(r"^(?:[cdjlmnst]|qu)['’]", "", w, flags=re.I)
             for w in re.findall(r"[^\W_][\w'’-]*", question or "")]  # fmt: skip
    kept = [
        w for w in words
        if len(w) > 2 and fold(w) not in STOPWORDS | _NOT_SUBJECT and not w.isdigit()
    ]  # fmt: skip
    return " ".join(list(dict.fromkeys(kept))[:SUBJECT_WORDS])


def _part(text: str) -> str:
    """A fragment of the correction, trimmed of its closing words and punctuation."""
    cut = _END.sub("", " ".join(text.split()))
    first = cut.split(" ", 1)[0]
    if fold(first) in STOPWORDS and first[1:].islower():  # "The PDF" → "the PDF", not "Tom"
        cut = cut[:1].lower() + cut[1:]
    return cut


def _third_person(text: str, name: str) -> str:
    """'I don't want bullet points' → 'Camille doesn't want bullet points'."""
    rewritten = about_speaker(text, name)
    if rewritten.startswith(("According to ", "D'après ")):
        return text  # no first person: the instruction reads as it is
    return rewritten
