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
    # The user's chats one index seek each (ix_captures_user_chat), not every message they
    # sent: a loose index scan, in one statement on SQLite and PostgreSQL alike.
    with services.db.reading() as conn:
        rows = conn.exec_driver_sql(
            "WITH RECURSIVE mine(chat) AS ("
            "SELECT min(chat_id) FROM captures WHERE user_id = ? "
            "UNION ALL SELECT (SELECT min(chat_id) FROM captures "
            "WHERE user_id = ? AND chat_id > mine.chat) FROM mine WHERE mine.chat IS NOT NULL"
            ") SELECT chat FROM mine WHERE chat IS NOT NULL "
            "UNION SELECT chat_id FROM chat_imports WHERE imported_by = ?",
            (str(user_id), str(user_id), str(user_id)),
        ).all()
    return sorted(r[0] for r in rows)


def search_scope(services: Services, chats: list[str] | None) -> list[str] | None:
    """The chats an archive search must be limited to: None when `chats` already holds every
    chat of the archive (a guest in every chat), since filtering by chat then keeps everything
    and costs the vector store CPU in proportion to the archive. A chat that appears after
    this look is not in `chats`: callers drop what such a search finds outside them."""
    if chats is None:
        return None
    with services.db.reading() as conn:
        if not chats:
            return (
                chats
                if conn.exec_driver_sql("SELECT min(chat_id) FROM captures").scalar()
                else None
            )
        # The archive's chats in order, one index seek each (chat_id leads
        # ix_captures_chat_sent), until one the user is not in: at most len(chats) + 1 seeks
        # however large the archive, in one statement.
        marks = ",".join("?" * len(chats))
        outside = conn.exec_driver_sql(
            "WITH RECURSIVE seen(chat) AS (SELECT min(chat_id) FROM captures "
            "UNION ALL SELECT (SELECT min(chat_id) FROM captures WHERE chat_id > seen.chat) "
            "FROM seen WHERE seen.chat IN ({marks})) SELECT chat FROM seen "
            "WHERE chat IS NOT NULL AND chat NOT IN ({marks}) LIMIT 1".replace("{marks}", marks),
            (*chats, *chats),
        ).first()
    return chats if outside is not None else None


def may_recall(services: Services, user_id: str | None, chat_id: str) -> bool:
    """Whether `user_id` may recall the archive of one chat."""
    chats = visible_chats(services, user_id)
    return chats is None or str(chat_id) in chats
