"""Reflexion (daily): read every captured operator turn of a day — no slicing cap — detect
corrections (French, English, Italian lexicon, plus 👎 feedback), count violations of existing
procedural rules as recurrences, and propose new lessons for the rest."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.learning.candidates import Candidate
from core.learning.consent import ConsentRefused
from core.recall.lexical import fold, terms
from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services

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
    """Whether an operator turn corrects the assistant."""
    return bool(_CORRECTION.search(fold(text).replace("’", "'")))


def _turns(services: Services, start: datetime, end: datetime):
    """Every operator turn of the period, batch after batch (no cap)."""
    offset = 0
    while True:
        rows = services.db.rows(
            "SELECT id, text, chat_id, sent_at FROM captures WHERE role = 'user' "
            "AND sent_at >= ? AND sent_at < ? ORDER BY sent_at LIMIT ? OFFSET ?",
            (db_time(start), db_time(end), BATCH, offset),
        )
        if not rows:
            return
        yield from rows
        offset += len(rows)


def _negative_feedback(services: Services, start: datetime, end: datetime) -> list[str]:
    """Capture ids of the turns whose reply got a 👎, among every trace of the period."""
    rows = services.db.rows(
        "SELECT capture_id, feedback FROM traces WHERE created_at >= ? "
        "AND created_at < ? AND capture_id IS NOT NULL AND feedback != '[]'",
        (db_time(start), db_time(end)),
    )
    return [
        capture_id
        for capture_id, feedback in rows
        if any(f.get("signal") == "down" for f in json.loads(feedback or "[]"))
    ]


def _reflected(services: Services) -> set[str]:
    """Turns a previous run already turned into a lesson (a rerun must not repeat them)."""
    rows = services.db.rows(
        "SELECT j.value FROM proposals p, json_each(p.source_capture_ids) j "
        "WHERE p.origin = 'reflexion'"
    )
    return {r[0] for r in rows}


def _violated_rule(text: str, rules) -> Any:
    words = set(terms(text))
    for rule in rules:
        triggers = set((rule.attributes or {}).get("triggers") or []) | set(rule.topics)
        rule_words = set(terms(rule.canonical_text))
        if (triggers & words) or len(rule_words & words) >= 2:
            return rule
    return None


async def reflect(services: Services, day: date | None = None) -> dict[str, Any]:
    """Run reflexion over one day (default: today, UTC)."""
    day = day or services.clock.now().date()
    start = datetime(day.year, day.month, day.day)
    end = start + timedelta(days=1)
    rules = services.memory.list(tier="procedural", status="active", limit=1000)
    read = corrections = blocked = 0
    violations: dict[str, list[str]] = {}
    lessons = []
    flagged = set(_negative_feedback(services, start, end))
    reflected = _reflected(services)
    for capture_id, text, _chat, _sent in _turns(services, start, end):
        read += 1
        if not (is_correction(text) or capture_id in flagged):
            continue
        corrections += 1
        rule = _violated_rule(text, rules)
        if rule is not None:
            if capture_id not in (rule.attributes or {}).get("violation_captures", []):
                violations.setdefault(rule.memory_id, []).append(capture_id)
            continue
        if capture_id in reflected:
            continue
        candidate = Candidate(
            text=f"Lesson from a correction: {text.strip()[:400]}",
            kind="constraint",
            tier="procedural",
            importance=3,
            confidence=0.6,
            authority="job",
            source_capture_ids=[capture_id],
            reason="correction detected by reflexion",
        )
        try:
            proposal = await services.learner.submit(candidate, origin="reflexion")
        except ConsentRefused:
            blocked += 1
            continue
        lessons.append(proposal.id)
    for memory_id, captures in violations.items():
        entry = services.memory.require(memory_id)
        attrs = {
            **entry.attributes,
            "violations": entry.attributes.get("violations", 0) + len(captures),
            # Which turns were counted, so reflecting on a day twice counts each once.
            "violation_captures": [*entry.attributes.get("violation_captures", []), *captures],
        }
        services.memory.set_status(memory_id, entry.status, attributes=attrs)
    return {
        "day": day.isoformat(),
        "turns_read": read,
        "corrections": corrections,
        "rule_violations": {memory_id: len(c) for memory_id, c in violations.items()},
        "lessons_proposed": len(lessons),
        "blocked_by_consent": blocked,
    }
