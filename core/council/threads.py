"""Persistent expert and sub-agent threads (rows of core.threads), resumable by sub_sid."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import threads
from core.errors import NotFound
from core.ids import new_id
from core.storage.models import Thread

if TYPE_CHECKING:
    from core.services import Services


def open_thread(
    services: Services, kind: str, chat_id: str, role: str, sub_sid: str | None
) -> Thread:
    """Resume the thread `sub_sid` of this chat, or start a new one."""
    if sub_sid:
        row = threads.get(services.db, sub_sid)
        if row is None or row.kind != kind or row.chat_id != str(chat_id):
            raise NotFound(f"no {kind} thread {sub_sid!r} in this chat (see list_sub_chats)")
        return row
    now = services.clock.now()
    return Thread(id=f"{kind[:3]}-{new_id()[:12]}", kind=kind, chat_id=str(chat_id), role=role,
                  messages=[], created_at=now, updated_at=now)  # fmt: skip


def save_thread(
    services: Services, thread: Thread, messages: list[dict[str, Any]], summary: str
) -> None:
    """Persist a thread's messages and last summary."""
    threads.save(services.db, thread, messages, summary[:500], services.clock.now())


def list_sub_chats(services: Services, chat_id: str) -> list[dict[str, Any]]:
    """The chat's expert and sub-agent threads, newest first, with role and last summary."""
    rows = threads.of_chat(services.db, chat_id, ("expert", "subagent"))
    return [
        {"sub_sid": r.id, "kind": r.kind, "role": r.role, "summary": r.summary,
         "turns": sum(m.get("role") != "system" for m in r.messages),
         "updated_at": r.updated_at.isoformat()}
        for r in rows
    ]  # fmt: skip
