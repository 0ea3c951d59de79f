"""`elora learn`: run extraction over archived history (e.g. after an import), in batches.

Captures already learned from are recorded, so a rerun resumes where the last one stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.archive import speakers
from core.errors import EloraError
from core.learning.consent import LEARNABLE, Consent, ConsentRefused, blocked_by_rule
from core.learning.engine import LearningReport, contact_name, message
from core.learning.heuristics import heuristic_candidates
from core.storage.db import db_time, run

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BATCH = 20


def _pending(services: Services, chat_id: str | None, since: datetime | None, limit: int):
    # A message under a consent instruction is never material: not even counted as pending.
    sql = (
        "SELECT c.id, c.text, c.sent_at, c.sender, c.is_operator, c.user_id, c.surface "
        "FROM captures c LEFT JOIN learned_captures l ON l.capture_id = c.id "
        f"WHERE l.capture_id IS NULL AND c.role = 'user' AND length(c.text) >= 8 AND c.{LEARNABLE}"
    )
    params: list[Any] = []
    if chat_id is not None:
        sql += " AND c.chat_id = ?"
        params.append(str(chat_id))
    if since is not None:
        sql += " AND c.sent_at >= ?"
        params.append(db_time(since))
    sql += " ORDER BY c.sent_at LIMIT ?"
    params.append(limit)
    with services.db.session() as session:
        return run(session.connection(), sql, tuple(params)).all()


def _message(row, operator_ids: set[str]) -> dict[str, Any]:
    capture_id, text, sent_at, sender, is_operator, user_id, surface = row
    operator = None if is_operator is None else bool(is_operator)
    if operator is None and surface == "telegram":
        operator = speakers.is_operator_speaker(operator_ids, user_id)
    return message(capture_id, "user", text, speaker=sender, operator=operator,
                   date=str(sent_at)[:10])  # fmt: skip


def count_pending(services: Services, chat_id: str | None, since: datetime | None) -> int:
    """How many archived messages may still be learned from."""
    return len(_pending(services, chat_id, since, 10_000_000))


def _mark(services: Services, capture_ids: list[str]) -> None:
    now = db_time(services.clock.now())
    with services.db.session() as session:
        run(
            session.connection(),
            "INSERT INTO learned_captures (capture_id, learned_at) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING",
            [(cid, now) for cid in capture_ids],
        )


async def learn_archive(
    services: Services,
    chat_id: str | None = None,
    since: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    operator_only: bool = True,
) -> dict[str, Any]:
    """Extract candidates from every not-yet-learned message; return counts. What someone
    other than the operator said is learned as being about them, by name."""
    learner = services.learner
    mode = learner.extractor()
    consent = Consent(services)
    speakers.refresh(services)  # the operator may have become known since the import
    operator_ids = speakers.known_operator_ids(services)
    seen = proposals = failures = blocked = 0
    while True:
        rows = _pending(services, chat_id, since, BATCH)
        if not rows:
            break
        # Consent holds here as in a live exchange (never-store rules reach old messages too).
        messages = [_message(r, operator_ids) for r in rows if consent.allows(r[1])]
        blocked += len(rows) - len(messages)
        candidates = []
        if mode == "model" and messages:
            report = LearningReport(extractor="model")
            candidates = await learner._extract(messages, report)
            if report.failure is not None:
                # Leave the batch unlearned so the next run retries it, and stop here rather
                # than spend calls on a model that answers out of schema.
                failures += 1
                log.warning("elora learn stopped: %s", report.failure)
                break
        elif mode == "heuristic":
            for m in messages:
                candidates.extend(heuristic_candidates(m["text"], m["capture_id"], contact_name(m)))
        for candidate in candidates:
            if blocked_by_rule(candidate.text, consent.patterns):
                blocked += 1
                continue
            try:
                await learner.submit(candidate, origin="learn")
                proposals += 1
            except ConsentRefused:  # a forgotten text (tombstone)
                blocked += 1
            except EloraError as exc:
                failures += 1
                if on_progress is None:
                    raise
                log.warning("candidate from %s not filed: %s", candidate.source_capture_ids, exc)
        _mark(services, [r[0] for r in rows])
        seen += len(rows)
        if on_progress:
            on_progress(len(rows))
    return {"messages": seen, "proposals": proposals, "blocked": blocked, "failures": failures,
            "extractor": mode}  # fmt: skip
