"""Reflexion (daily): read every captured turn of a day — no slicing cap — detect corrections
of the assistant, count violations of existing procedural rules as recurrences, and propose
new lessons for the rest: prescriptive rules with their evidence (core.learning.lessons),
written by the LITE model when one is configured, built from structured patterns otherwise.

A correction is a user message that answers one of Elora's replies and disagrees with it
(French, English and Italian lexicon), or a turn whose reply got 👎. A message that merely
contains "pas ça" is not one, and a consent instruction ("ne retiens pas ça : …") never is:
consent-withheld messages are not read at all (core.learning.consent)."""

from __future__ import annotations

import logging
import re
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.errors import EloraError
from core.learning.candidates import Candidate
from core.learning.consent import Consent, ConsentRefused, consent_of
from core.learning.lessons import (
    Correction,
    Lesson,
    LessonsFailed,
    heuristic_lesson,
    model_lessons,
)
from core.memory.schema import topics_from_text
from core.recall.lexical import fold, terms

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BATCH = 500
_CORRECTION = re.compile(
    r"\b("
    # English
    r"that's wrong|that is wrong|wrong|incorrect|not what i (?:asked|said|meant)|i said|"
    r"i(?: have|'ve)? (?:already )?told you|"
    r"you forgot|you misunderstood|that's not it|not true|no,|nope|actually,|again\?|stop doing|"
    r"please don't|i already told|you keep|you always|how many times|"
    # French
    r"c'est faux|faux|non,|pas ca|tu te trompes|tu t'es trompe|je t'(?:ai|avais) (?:deja )?dit|"
    r"j'ai dit|je te l'(?:ai|avais) (?:deja )?dit|"
    r"tu as oublie|ce n'est pas ce que|ce n'est pas ca|arrete de|encore une fois|combien de fois|"
    r"je te l'ai deja dit|tu n'as pas compris|erreur|"
    # Italian
    r"sbagliato|e sbagliato|non e giusto|ti ho (?:gia )?detto|te l'ho (?:gia )?detto|hai sbagliato|"
    r"errore|non e vero|"
    r"non e quello|ancora una volta|quante volte|smettila|hai dimenticato|non hai capito|no,"
    r")"
)


def is_correction(text: str) -> bool:
    """Whether a turn's words disagree with what it answers (a consent instruction never does)."""
    if consent_of(text) is not None:
        return False
    return bool(_CORRECTION.search(fold(text).replace("’", "'")))


def _turns(services: Services, start: datetime, end: datetime):
    """Every user turn of the period that consent lets a job read, batch after batch (no cap)."""
    offset = 0
    while True:
        rows = services.archive.captures.user_turns(start, end, offset, BATCH)
        if not rows:
            return
        yield from rows
        offset += len(rows)


def _neighbour(services: Services, surface: str, chat: str, sent, rowid: int, before: bool,
               role: str) -> str:  # fmt: skip
    """The text of the nearest learnable message of `role` before (or after) a message in its
    chat."""
    found = services.archive.captures.adjacent(
        surface, chat, sent, rowid, before=before, role=role, learnable=True
    )
    return found.text if found is not None else ""


def _correction(services: Services, row, corrects: bool, consent: Consent) -> Correction:
    """A correction with what it corrects: the question Elora answered and its reply (each
    left out when consent withholds it)."""
    capture_id, text, chat, sent, surface, rowid, sender, message_id = row
    if corrects:  # it answers Elora's reply, which answered the message before
        reply = _neighbour(services, surface, chat, sent, rowid, True, "assistant")
        before = services.archive.captures.adjacent(surface, chat, sent, rowid, role="assistant")
        question = (
            _neighbour(services, surface, chat, before.sent_at, before.rowid, True, "user")
            if before is not None
            else ""
        )
    else:  # a 👎 on the reply to this very message
        question, text = text, ""
        reply = _neighbour(services, surface, chat, sent, rowid, False, "assistant")
    question = question if consent.allows(question) else ""
    reply = reply if consent.allows(reply) else ""
    speaker = sender if sender and sender != "operator" else services.settings.operator_name
    return Correction(capture_id, text, question, reply, speaker, thumbs_down=not corrects,
                      message={"surface": surface, "chat_id": chat, "message_id": message_id})  # fmt: skip


def _answers_the_assistant(services: Services, surface: str, chat: str, sent, rowid: int) -> bool:
    """Whether the message before this one in its chat is a reply of Elora's (not of an
    imported assistant such as ChatGPT)."""
    before = services.archive.captures.adjacent(surface, chat, sent, rowid)
    return (
        before is not None
        and before.role == "assistant"
        and (before.provenance or {}).get("import") is None
    )


def _violated_rule(text: str, rules) -> Any:
    words = set(terms(text))
    for rule in rules:
        triggers = set((rule.attributes or {}).get("triggers") or []) | set(rule.topics)
        rule_words = set(terms(rule.canonical_text))
        if (triggers & words) or len(rule_words & words) >= 2:
            return rule
    return None


async def reflect(services: Services, day: date | None = None) -> dict[str, Any]:
    """Run reflexion over one day (default: today, UTC); LessonsFailed (after counting rule
    violations) when the model's lessons cannot be used."""
    day = day or services.clock.now().date()
    start = datetime(day.year, day.month, day.day)
    end = start + timedelta(days=1)
    rules = services.memory.list(tier="procedural", status="active", limit=1000)
    consent = Consent.of(services)
    read = corrections = withheld = 0
    violations: dict[str, list[str]] = {}
    pending: list[Correction] = []
    flagged = set(services.traces.disliked_turns(start, end))
    reflected = services.proposals.cited_by("reflexion")
    for row in _turns(services, start, end):
        capture_id, text, chat, sent, surface, rowid = row[:6]
        if not consent.allows(text):  # a never-store subject, or an unflagged instruction
            withheld += 1
            continue
        read += 1
        corrects = is_correction(text) and _answers_the_assistant(
            services, surface, chat, sent, rowid
        )
        if not (corrects or capture_id in flagged):
            continue
        corrections += 1
        rule = _violated_rule(text, rules)
        if rule is not None:
            if capture_id not in (rule.attributes or {}).get("violation_captures", []):
                violations.setdefault(rule.memory_id, []).append(capture_id)
            continue
        if capture_id not in reflected:
            pending.append(_correction(services, row, corrects, consent))
    _count_violations(services, violations)
    by = "model" if pending and services.learner.extractor() == "model" else "heuristic"
    if by == "model":
        lessons, review = await _model_lessons(services, pending), []
    else:
        drafted = [(c, heuristic_lesson(c)) for c in pending]
        lessons = [lesson for _, lesson in drafted if lesson is not None]
        review = [c.message for c, lesson in drafted if lesson is None]
    proposed, blocked = await _propose(services, lessons)
    return {
        "day": day.isoformat(),
        "turns_read": read,
        "corrections": corrections,
        "rule_violations": {memory_id: len(c) for memory_id, c in violations.items()},
        "lessons_proposed": proposed,
        "lessons_by": by,
        # Corrections no pattern could read: for the operator to look at, never a quoted rule.
        "needs_review": review,
        "blocked_by_consent": blocked,
        "withheld_by_consent": withheld,
    }


def _count_violations(services: Services, violations: dict[str, list[str]]) -> None:
    for memory_id, captures in violations.items():
        entry = services.memory.require(memory_id)
        attrs = {
            **entry.attributes,
            "violations": entry.attributes.get("violations", 0) + len(captures),
            # Which turns were counted, so reflecting on a day twice counts each once.
            "violation_captures": [*entry.attributes.get("violation_captures", []), *captures],
        }
        services.memory.set_status(memory_id, entry.status, attributes=attrs)


async def _model_lessons(services: Services, pending: list[Correction]) -> list[Lesson]:
    """The model's lessons; its call is traced (spend counts against the daily cap) and an
    unusable answer raises LessonsFailed, leaving the corrections for the next run."""
    from core.routing.client import CALLS
    from core.routing.loop import usage_totals

    token = CALLS.set([])
    failure = None
    try:
        return await model_lessons(services, pending)
    except LessonsFailed as exc:
        failure = str(exc)
        raise
    finally:
        calls = list(CALLS.get() or [])
        CALLS.reset(token)
        try:
            services.traces.record(
                surface="job", classification={"intent": "reflexion", "corrections": len(pending)},
                models=calls, error=failure[:300] if failure else None, **usage_totals(calls),
            )  # fmt: skip
        except EloraError as exc:  # the lessons matter more than their trace
            log.warning("reflexion trace not stored: %s", exc)


async def _propose(services: Services, lessons: list[Lesson]) -> tuple[int, int]:
    """File each lesson as a procedural proposal with its evidence; (proposed, blocked)."""
    proposed = blocked = 0
    for lesson in lessons:
        candidate = Candidate(
            text=lesson.rule,
            kind="constraint",
            tier="procedural",
            topics=lesson.topics or topics_from_text(lesson.rule),
            importance=3,
            confidence=0.7 if lesson.by == "model" else 0.6,
            authority="job",
            source_capture_ids=lesson.capture_ids,
            observations=len(lesson.capture_ids),
            reason=f"lesson from {len(lesson.capture_ids)} correction(s), by {lesson.by}",
        )
        extra = {"attributes": {"triggers": lesson.triggers, "lesson_by": lesson.by}}
        try:
            await services.learner.submit(candidate, origin="reflexion", extra=extra)
        except ConsentRefused:
            blocked += 1
            continue
        proposed += 1
    return proposed, blocked
