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
from core.learning.consent import Consent, ConsentRefused, blocked_by_rule
from core.learning.engine import LearningReport, contact_name, message
from core.learning.heuristics import heuristic_candidates

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BATCH = 20


def _pending(services: Services, chat_id: str | None, since: datetime | None, limit: int):
    # A message under a consent instruction is never material: not even counted as pending.
    return services.archive.captures.unlearned(chat_id, since, limit)


def _message(row, operator_ids: set[str]) -> dict[str, Any]:
    capture_id, text, sent_at, sender, is_operator, user_id, surface = row
    operator = None if is_operator is None else bool(is_operator)
    if operator is None and surface == "telegram":
        operator = speakers.is_operator_speaker(operator_ids, user_id)
    return message(capture_id, "user", text, speaker=sender, operator=operator,
                   date=str(sent_at)[:10])  # fmt: skip


def count_pending(services: Services, chat_id: str | None, since: datetime | None) -> int:
    """How many archived messages may still be learned from."""
    return services.archive.captures.count_unlearned(chat_id, since)


def _mark(services: Services, capture_ids: list[str]) -> None:
    services.archive.captures.mark_learned(capture_ids, services.clock.now())


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
    consent = Consent.of(services)
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
