"""State that chat surfaces keep in the shared database: per-chat settings (private mode),
which reply came from which trace, and which updates were already handled."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services


class SurfaceState:
    """Small per-surface records; everything goes through SQLite so restarts lose nothing."""

    def __init__(self, services: Services):
        self.services = services

    def _exec(self, sql: str, params: tuple = ()):
        return self.services.db.rows(sql, params)

    def _write(self, sql: str, params: tuple = ()) -> int:
        return self.services.db.execute(sql, params)

    def setting(self, surface: str, chat_id: str, key: str) -> str | None:
        """A chat setting, or None."""
        rows = self._exec(
            "SELECT value FROM chat_settings WHERE surface = ? AND chat_id = ? AND key = ?",
            (surface, str(chat_id), key),
        )
        return rows[0][0] if rows else None

    def set_setting(self, surface: str, chat_id: str, key: str, value: str) -> None:
        """Store a chat setting."""
        self._write(
            "INSERT INTO chat_settings (surface, chat_id, key, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (surface, chat_id, key) DO UPDATE SET value = excluded.value",
            (surface, str(chat_id), key, value),
        )

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
        self._write(
            "INSERT INTO surface_messages (surface, chat_id, message_id, trace_id, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (surface, chat_id, message_id) "
            "DO UPDATE SET trace_id = excluded.trace_id, created_at = excluded.created_at",
            (surface, str(chat_id), str(message_id), trace_id, db_time(self.services.clock.now())),
        )

    def trace_for(self, surface: str, chat_id: str, message_id: str) -> str | None:
        """The trace behind a sent reply, if known."""
        rows = self._exec(
            "SELECT trace_id FROM surface_messages WHERE surface = ? AND chat_id = ? AND message_id = ?",
            (surface, str(chat_id), str(message_id)),
        )
        return rows[0][0] if rows else None

    def already_handled(self, surface: str, update_id: int) -> bool:
        """Whether this update was processed before (e.g. redelivered after a restart)."""
        rows = self._exec(
            "SELECT 1 FROM handled_updates WHERE surface = ? AND update_id = ?",
            (surface, update_id),
        )
        return bool(rows)

    def mark_handled(self, surface: str, update_id: int) -> None:
        """Record that an update was processed; old records are pruned after a week."""
        now = self.services.clock.now()
        self._write(
            "INSERT INTO handled_updates (surface, update_id, handled_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (surface, update_id, db_time(now)),
        )
        if update_id % 500 == 0:
            self._write(
                "DELETE FROM handled_updates WHERE handled_at < ?",
                (db_time(now - timedelta(days=7)),),
            )
