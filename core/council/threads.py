"""Persistent expert and sub-agent threads (SQLite `threads`), resumable by sub_sid."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from core.errors import NotFound
from core.ids import new_id
from core.storage.models import Thread

if TYPE_CHECKING:
    from core.services import Services


def open_thread(
    services: Services, kind: str, chat_id: str, role: str, sub_sid: str | None
) -> Thread:
    """Resume the thread `sub_sid` of this chat, or start a new one."""
    with services.db.session() as session:
        if sub_sid:
            row = session.exec(select(Thread).where(Thread.id == sub_sid)).first()
            if row is None or row.kind != kind or row.chat_id != str(chat_id):
                raise NotFound(f"no {kind} thread {sub_sid!r} in this chat (see list_sub_chats)")
            session.expunge(row)
            return row
    now = services.clock.now()
    return Thread(id=f"{kind[:3]}-{new_id()[:12]}", kind=kind, chat_id=str(chat_id), role=role,
                  messages=[], created_at=now, updated_at=now)  # fmt: skip


def save_thread(
    services: Services, thread: Thread, messages: list[dict[str, Any]], summary: str
) -> None:
    """Persist a thread's messages and last summary."""
    with services.db.session(write=True) as session:
        row = session.exec(select(Thread).where(Thread.id == thread.id)).first() or thread
        row.messages = messages
        row.summary = summary[:500]
        row.role = thread.role
        row.updated_at = services.clock.now()
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)


def list_sub_chats(services: Services, chat_id: str) -> list[dict[str, Any]]:
    """The chat's expert and sub-agent threads, newest first, with role and last summary."""
    with services.db.session() as session:
        rows = session.exec(
            select(Thread)
            .where(Thread.chat_id == str(chat_id), col(Thread.kind).in_(("expert", "subagent")))
            .order_by(col(Thread.updated_at).desc())
        ).all()
        return [
            {"sub_sid": r.id, "kind": r.kind, "role": r.role, "summary": r.summary,
             "turns": sum(m.get("role") != "system" for m in r.messages),
             "updated_at": r.updated_at.isoformat()}
            for r in rows
        ]  # fmt: skip
