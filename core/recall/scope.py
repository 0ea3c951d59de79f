"""Whose archive a request may recall: the chats its user takes part in, and what they imported.

Several allowlisted people may share one Elora. The operator (Settings.is_operator: the
configured ids, else the first allowlisted one; local surfaces pass None) recalls everything;
anyone else recalls only chats where they sent a message and chats they imported themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.services import Services


def visible_chats(services: Services, user_id: str | None) -> list[str] | None:
    """Chat ids whose archive `user_id` may recall; None means every chat (the operator)."""
    if services.settings.is_operator(user_id):
        return None
    with services.db.session() as session:
        rows = (
            session.connection()
            .exec_driver_sql(
                "SELECT DISTINCT chat_id FROM captures WHERE user_id = ? "
                "UNION SELECT chat_id FROM chat_imports WHERE imported_by = ?",
                (str(user_id), str(user_id)),
            )
            .all()
        )
    return sorted(r[0] for r in rows)


def may_recall(services: Services, user_id: str | None, chat_id: str) -> bool:
    """Whether `user_id` may recall the archive of one chat."""
    chats = visible_chats(services, user_id)
    return chats is None or str(chat_id) in chats
