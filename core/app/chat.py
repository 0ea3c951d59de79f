"""Conversations: ask, documents, a fresh start, private mode, replies and the feedback on them,
and which updates a surface already handled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.documents import DocumentRegister
from core.offload import run_blocking
from core.pipeline import Reply, Request

if TYPE_CHECKING:
    from core.services import Services


async def ask(services: Services, request: Request) -> Reply:
    """Answer one message end to end: capture, recall, route, answer, learn, trace."""
    return await services.assistant.handle(request)


async def answer(services: Services, request: Request) -> Reply:
    """Answer one message (capture, recall, route); the surface sends the reply, then calls
    `after_reply`."""
    return await services.assistant.answer(request)


async def after_reply(services: Services, reply: Reply) -> Reply:
    """Learn from an answered exchange and store its trace, once its reply is on its way."""
    return await services.assistant.after_reply(reply)


async def drain(services: Services) -> None:
    """Wait for the work scheduled after replies (indexing the new messages)."""
    await services.assistant.drain()


async def flush_learning(
    services: Services, surface: str | None = None, chat_id: str | None = None
):
    """Learn now from the exchanges kept for a chat's next message (every chat's when no chat
    is named): its burst is over, or the surface is stopping."""
    return await services.learner.flush((surface, chat_id) if surface is not None else None)


def new_conversation(services: Services, surface: str, chat_id: str, user_id: str) -> None:
    """Start over in a chat: its window and this user's session memory are cleared."""
    services.window(surface, chat_id, user_id).reset()
    services.session_memory.end_session(user_id, chat_id)


def fresh_chat_id(prefix: str) -> str:
    """A new conversation's id (a one-shot `elora ask` starts one each time)."""
    from core.ids import new_id

    return f"{prefix}-{new_id()[:8]}"


def is_private(services: Services, surface: str, chat_id: str) -> bool:
    """Whether private mode is on for a chat (nothing kept beyond the session)."""
    return services.chats.is_private(surface, chat_id)


def set_private(services: Services, surface: str, chat_id: str, on: bool) -> None:
    """Turn private mode on or off for a chat."""
    services.chats.set_private(surface, chat_id, on)


async def add_document(
    services: Services,
    *,
    surface: str,
    chat_id: str,
    user_id: str,
    name: str,
    data: bytes,
    sent_at=None,
    message_id: str | None = None,
    caption: str | None = None,
    private: bool = False,
    into_window: bool = False,
) -> DocumentRegister:
    """Take a file: archived verbatim (unless private), indexed in session memory, distilled.
    `into_window` adds its register to the chat's conversation, so later questions can search
    it (a private chat keeps no turns: the register then goes with the question instead)."""
    from core.documents import ingest_document

    register = await ingest_document(
        services, surface=surface, chat_id=chat_id, user_id=user_id, name=name, data=data,
        sent_at=sent_at, message_id=message_id, caption=caption, private=private,
    )  # fmt: skip
    if into_window and not private:
        window = services.window(surface, chat_id, user_id)
        await run_blocking(window.append, "user", register.render(), register.capture_id)
    return register


def note_reply(
    services: Services, surface: str, chat_id: str, message_id: str, trace_id: str | None
) -> None:
    """Remember which trace a sent reply came from (feedback on the reply finds it)."""
    services.chats.remember_reply(surface, chat_id, message_id, trace_id)


def feedback(services: Services, chat_id: str, signal: str, trace_id: str | None = None) -> float:
    """👍/👎 (or a correction) on a reply, the chat's last one by default; the updated p."""
    from core.feedback import record_feedback

    return record_feedback(services, chat_id, signal, trace_id=trace_id)


def feedback_on_reply(
    services: Services, surface: str, chat_id: str, message_id: str, signal: str
) -> float | None:
    """Feedback on one sent message; None when it is not one of Elora's replies."""
    trace_id = services.chats.trace_for(surface, chat_id, message_id)
    if trace_id is None:
        return None
    return feedback(services, chat_id, signal, trace_id=trace_id)


def already_handled(services: Services, surface: str, update_id: int) -> bool:
    """Whether a surface processed this update before (a redelivery after a restart)."""
    return services.chats.already_handled(surface, update_id)


def mark_handled(services: Services, surface: str, update_id: int) -> None:
    """Record that a surface processed this update."""
    services.chats.mark_handled(surface, update_id)
