"""Chat state that surfaces keep in the shared database: per-chat settings (private mode),
which reply came from which trace, and which updates were already handled."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from sqlmodel import delete, select

from core.storage.dialect import insert_ignoring, upsert
from core.storage.models import ChatSetting, HandledUpdate, SurfaceMessage

if TYPE_CHECKING:
    from core.clock import Clock
    from core.storage.db import Database

# Handled updates are kept this long (a redelivery comes within minutes, not weeks).
HANDLED_DAYS = 7


class ChatState:
    """Small per-chat records (owner of chat_settings, surface_messages, handled_updates);
    everything goes through SQLite so restarts lose nothing."""

    def __init__(self, db: Database, clock: Clock):
        self.db = db
        self.clock = clock

    def setting(self, surface: str, chat_id: str, key: str) -> str | None:
        """A chat setting, or None."""
        stmt = select(ChatSetting.value).where(
            ChatSetting.surface == surface,
            ChatSetting.chat_id == str(chat_id),
            ChatSetting.key == key,
        )
        with self.db.session() as session:
            return session.exec(stmt).first()

    def set_setting(self, surface: str, chat_id: str, key: str, value: str) -> None:
        """Store a chat setting."""
        row = {"surface": surface, "chat_id": str(chat_id), "key": key, "value": value}
        with self.db.session(write=True) as session:
            session.exec(upsert(ChatSetting, row, ["surface", "chat_id", "key"]))

    def is_private(self, surface: str, chat_id: str) -> bool:
        """Whether private mode is on for a chat (nothing kept beyond the session)."""
        return self.setting(surface, chat_id, "private") == "on"

    def set_private(self, surface: str, chat_id: str, on: bool) -> None:
        """Turn private mode on or off."""
        self.set_setting(surface, chat_id, "private", "on" if on else "off")

    def remember_reply(
        self, surface: str, chat_id: str, message_id: str, trace_id: str | None
    ) -> None:
        """Map a sent reply to its trace (feedback on the reply finds the trace)."""
        row = {"surface": surface, "chat_id": str(chat_id), "message_id": str(message_id),
               "trace_id": trace_id, "created_at": self.clock.now()}  # fmt: skip
        with self.db.session(write=True) as session:
            session.exec(upsert(SurfaceMessage, row, ["surface", "chat_id", "message_id"]))

    def trace_for(self, surface: str, chat_id: str, message_id: str) -> str | None:
        """The trace behind a sent reply, if known."""
        stmt = select(SurfaceMessage.trace_id).where(
            SurfaceMessage.surface == surface,
            SurfaceMessage.chat_id == str(chat_id),
            SurfaceMessage.message_id == str(message_id),
        )
        with self.db.session() as session:
            return session.exec(stmt).first()

    def already_handled(self, surface: str, update_id: int) -> bool:
        """Whether this update was processed before (e.g. redelivered after a restart)."""
        stmt = select(HandledUpdate.update_id).where(
            HandledUpdate.surface == surface, HandledUpdate.update_id == update_id
        )
        with self.db.session() as session:
            return session.exec(stmt).first() is not None

    def mark_handled(self, surface: str, update_id: int) -> None:
        """Record that an update was processed; old records are pruned after a week."""
        now = self.clock.now()
        row = {"surface": surface, "update_id": update_id, "handled_at": now}
        with self.db.session(write=True) as session:
            session.exec(insert_ignoring(HandledUpdate, row))
            if update_id % 500 == 0:
                cutoff = now - timedelta(days=HANDLED_DAYS)
                session.exec(delete(HandledUpdate).where(HandledUpdate.handled_at < cutoff))
