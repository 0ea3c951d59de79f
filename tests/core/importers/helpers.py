"""Small Telegram exports built in code, and raw looks at the archive, for import tests."""

from __future__ import annotations

from pathlib import Path

from core.storage.db import run

EXAMPLES = Path(__file__).resolve().parents[3] / "data" / "examples"


def rows(services, sql: str, *params) -> list[tuple]:
    """Rows of a SQL query against the archive database."""
    with services.db.session() as session:
        return [tuple(r) for r in run(session.connection(), sql, params).all()]


def tg_message(mid: int, text="hello", sender="Léa Martin", from_id="user42", **extra) -> dict:
    """A Telegram Desktop message record."""
    record = {
        "id": mid,
        "type": "message",
        "date": f"2024-03-0{1 + mid % 9}T10:{mid % 60:02d}:00",
        "date_unixtime": str(1709286000 + mid * 60),
        "from": sender,
        "from_id": from_id,
        "text": text,
    }
    record.update(extra)
    return record


def tg_export(*chats: dict) -> dict:
    """A full-account export holding the given chats."""
    return {"about": "test", "chats": {"about": "chats", "list": list(chats)}}


def tg_chat(chat_id: int, messages: list[dict], name="Léa Martin") -> dict:
    """One chat of a Telegram export."""
    return {"name": name, "type": "personal_chat", "id": chat_id, "messages": messages}
