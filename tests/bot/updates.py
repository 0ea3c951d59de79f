"""Real Bot API update JSON, as Telegram sends it, for pushing into FakeTelegram or de_json."""

from __future__ import annotations

import itertools
import time
from typing import Any

OPERATOR_ID = 42
PARTNER_ID = 43  # a second allowlisted person
STRANGER_ID = 666

_message_ids = itertools.count(1)
_callback_ids = itertools.count(1)


def user(user_id: int = OPERATOR_ID, language: str | None = "fr", name: str = "Camille") -> dict:
    """A Telegram User."""
    data: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": name}
    if language:
        data["language_code"] = language
    return data


OPERATOR = user()


def private_chat(person: dict) -> dict:
    """The private chat with a person (its id is the user id)."""
    return {"id": person["id"], "type": "private", "first_name": person["first_name"]}


def group_chat(chat_id: int = -100123, title: str = "Famille") -> dict:
    """A supergroup."""
    return {"id": chat_id, "type": "supergroup", "title": title}


def _message(person: dict, chat: dict | None, **fields: Any) -> dict:
    return {
        "message_id": next(_message_ids),
        "date": int(time.time()),
        "chat": chat or private_chat(person),
        "from": person,
        **fields,
    }


def message(text: str, person: dict = OPERATOR, chat: dict | None = None) -> dict:
    """A text message update; a leading /command gets its bot_command entity, like Telegram."""
    fields: dict[str, Any] = {"text": text}
    if text.startswith("/"):
        fields["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"message": _message(person, chat, **fields)}


def document(
    file_id: str,
    name: str,
    size: int,
    mime: str = "text/plain",
    caption: str | None = None,
    person: dict = OPERATOR,
    chat: dict | None = None,
) -> dict:
    """A document message update (the file itself is served by FakeTelegram.add_file)."""
    fields: dict[str, Any] = {
        "document": {"file_id": file_id, "file_unique_id": f"u-{file_id}", "file_name": name,
                     "mime_type": mime, "file_size": size},
    }  # fmt: skip
    if caption:
        fields["caption"] = caption
    return {"message": _message(person, chat, **fields)}


def callback(sent: dict, data: str, person: dict = OPERATOR) -> dict:
    """A press on an inline button of a message the bot sent (as FakeTelegram returned it)."""
    return {
        "callback_query": {
            "id": str(next(_callback_ids)),
            "from": person,
            "chat_instance": f"ci-{sent['chat']['id']}",
            "message": sent,
            "data": data,
        }
    }


def reaction(sent: dict, emoji: str, person: dict = OPERATOR) -> dict:
    """A reaction set on a message the bot sent."""
    return {
        "message_reaction": {
            "chat": sent["chat"],
            "message_id": sent["message_id"],
            "user": person,
            "date": int(time.time()),
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": emoji}],
        }
    }


def buttons(sent: dict) -> list[tuple[str, str]]:
    """(label, callback_data) of every inline button on a sent message."""
    markup = sent.get("reply_markup") or {}
    return [
        (b["text"], b["callback_data"]) for row in markup.get("inline_keyboard", []) for b in row
    ]
