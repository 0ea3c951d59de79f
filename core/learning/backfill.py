"""`elora learn`: run extraction over archived history (e.g. after an import), in batches.

Captures already learned from are recorded, so a rerun resumes where the last one stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.errors import EloraError
from core.learning.consent import blocked_by_rule, never_store_patterns, read_consent
from core.learning.heuristics import heuristic_candidates
from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BATCH = 20


def _pending(services: Services, chat_id: str | None, since: datetime | None, limit: int):
    sql = (
        "SELECT c.id, c.text, c.sent_at, c.sender FROM captures c "
        "LEFT JOIN learned_captures l ON l.capture_id = c.id "
        "WHERE l.capture_id IS NULL AND c.role = 'user' AND length(c.text) >= 8"
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
        return session.connection().exec_driver_sql(sql, tuple(params)).all()


def count_pending(services: Services, chat_id: str | None, since: datetime | None) -> int:
    """How many archived operator messages have not been learned from yet."""
    return len(_pending(services, chat_id, since, 10_000_000))


def _mark(services: Services, capture_ids: list[str]) -> None:
    now = db_time(services.clock.now())
    with services.db.session() as session:
        session.connection().exec_driver_sql(
            "INSERT OR IGNORE INTO learned_captures (capture_id, learned_at) VALUES (?, ?)",
            [(cid, now) for cid in capture_ids],
        )


async def learn_archive(
    services: Services,
    chat_id: str | None = None,
    since: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    operator_only: bool = True,
) -> dict[str, Any]:
    """Extract candidates from every not-yet-learned operator message; return counts."""
    learner = services.learner
    mode = learner.extractor()
    patterns = never_store_patterns(services)
    seen = proposals = failures = blocked = 0
    while True:
        rows = _pending(services, chat_id, since, BATCH)
        if not rows:
            break
        # "Don't remember this" silences its message here as in a live exchange.
        messages = [
            {"capture_id": r[0], "role": "user", "text": r[1], "date": str(r[2])[:10]}
            for r in rows
            if not read_consent(r[1]).suppress_turn
        ]
        candidates = []
        if mode == "model" and messages:
            from core.learning.engine import LearningReport

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
                candidates.extend(heuristic_candidates(m["text"], m["capture_id"]))
        for candidate in candidates:
            if blocked_by_rule(candidate.text, patterns):
                blocked += 1
                continue
            try:
                await learner.submit(candidate, origin="learn")
                proposals += 1
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
