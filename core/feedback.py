"""Feedback on replies (👍/👎, corrections, needed escalations) feeds the capability profile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import InvalidInput, NotFound
from core.routing.profile import FEEDBACK

if TYPE_CHECKING:
    from core.services import Services


def record_feedback(
    services: Services, chat_id: str, signal: str, trace_id: str | None = None
) -> float:
    """Attach feedback to a reply (the chat's last one by default); return the updated p.

    A reply counts once per signal: the same 👍 given again (a reaction removed and re-added,
    a reaction and a button) changes nothing.
    """
    if signal not in FEEDBACK:
        raise InvalidInput(f"unknown feedback {signal!r}; use one of {', '.join(FEEDBACK)}")
    trace = services.traces.get(trace_id) if trace_id else services.traces.last_for_chat(chat_id)
    if trace is None:
        raise NotFound(f"no reply to give feedback on in chat {chat_id}")
    dimension = (trace.classification or {}).get("intent", "task")
    if not services.traces.add_feedback(trace, signal):
        return services.profile.effective(dimension)
    return services.profile.record(dimension, signal)
