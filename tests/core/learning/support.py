"""Helpers shared by the learning, jobs, audit and mirror tests: a pinned clock, captures
written straight into the archive, valid entries, and one-line pipeline calls."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from core.archive.records import CaptureIn
from core.memory.schema import KIND_TO_TIER
from core.pipeline import Request
from tests.fakes import FixedClock as BaseFixedClock

# A Wednesday noon; "today" for reflexion, "now" for recency and staleness.
NOW = datetime(2025, 4, 16, 12, 0)


class FixedClock(BaseFixedClock):
    """Pinned to this module's NOW unless told otherwise."""

    def __init__(self, moment: datetime = NOW):
        super().__init__(moment)


def capture(
    services, text: str, sent_at: datetime = NOW, *, chat_id: str = "42", role: str = "user",
    sender: str = "Camille", operator: bool | None = True, user_id: str = "7",
) -> str:  # fmt: skip
    """Archive one message as a surface would (the operator's, unless told), return its id."""
    item = CaptureIn(surface="telegram", chat_id=chat_id, text=text, sent_at=sent_at,
                     user_id=user_id, sender=sender, role=role, operator=operator)  # fmt: skip
    return services.archive.capture(item, index=False).id


def entry(memory_id: str, text: str, *, kind: str = "fact", **fields: Any) -> dict[str, Any]:
    """A complete, valid entry; any field can be overridden."""
    data: dict[str, Any] = {
        "memory_id": memory_id,
        "tier": KIND_TO_TIER[kind],
        "kind": kind,
        "canonical_text": text,
        "confidence": 0.8,
        "observations": 1,
        "topics": ["general"],
        "last_touched": NOW - timedelta(days=1),
    }
    data.update(fields)
    return data


async def ask(services, text: str, chat_id: str = "c1", **fields: Any):
    """Send one operator message through the real pipeline."""
    request = Request(surface="cli", chat_id=chat_id, text=text, user_id="operator",
                      sender="operator", **fields)  # fmt: skip
    return await services.assistant.handle(request)


def proposals(services, *statuses: str) -> list:
    """Every proposal (or those with these statuses)."""
    return services.proposals.list(statuses or None, limit=10_000)


def extraction(*candidates: dict) -> str:
    """What the LITE model answers to the extraction prompt."""
    return json.dumps({"candidates": list(candidates)})
