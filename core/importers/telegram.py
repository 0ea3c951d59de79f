"""Telegram Desktop JSON exports: one chat's result.json, or a whole account's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from core.archive.records import CaptureIn
from core.importers.sources import Skipped, problem, required

SURFACE = "telegram"
# Keys that describe an attachment; kept in the capture's `media` (files by their exported name).
MEDIA_KEYS = (
    "photo",
    "file",
    "file_name",
    "thumbnail",
    "media_type",
    "mime_type",
    "sticker_emoji",
    "duration_seconds",
    "width",
    "height",
    "title",
    "performer",
    "poll",
    "contact_information",
    "location_information",
    "place_name",
    "address",
)
# Facts about a message worth keeping next to it, copied into provenance when present.
PROVENANCE_KEYS = ("forwarded_from", "saved_from", "via_bot", "edited", "author")


def chats(data: dict, source: str) -> list[tuple[str, dict]]:
    """Every chat of the export with its position: `chats.list[i]`, `left_chats.list[i]`, or ``."""
    if "chats" not in data:
        return [("", data)]
    found: list[tuple[str, dict]] = []
    for section in ("chats", "left_chats"):
        if section not in data:
            continue
        listing = required(data[section], "list", source, section)
        if not isinstance(listing, list):
            raise problem(source, f"{section}.list", "expected a list of chats")
        found.extend((f"{section}.list[{i}]", chat) for i, chat in enumerate(listing))
    return found


def _messages(chat: dict, source: str, position: str) -> list:
    where = f"{position}.messages" if position else "messages"
    messages = required(chat, "messages", source, position)
    if not isinstance(messages, list):
        raise problem(source, where, "expected a list of messages")
    return messages


def count(data: dict, source: str) -> tuple[int, int]:
    """How many chats and message records the export holds (checking its outline on the way)."""
    found = chats(data, source)
    return len(found), sum(len(_messages(chat, source, pos)) for pos, chat in found)


def flatten_text(text: Any, source: str, position: str) -> tuple[str, list[str]]:
    """The text as displayed, and the targets of its hidden links.

    Telegram writes plain text as a string, and formatted text as a list mixing strings and
    entities such as {"type": "bold", "text": "..."} or {"type": "text_link", "href": ...}.
    """
    if text is None:
        return "", []
    if isinstance(text, str):
        return text, []
    if not isinstance(text, list):
        raise problem(source, f"{position}.text", "expected a string or a list of entities")
    pieces: list[str] = []
    links: list[str] = []
    for i, part in enumerate(text):
        if isinstance(part, str):
            pieces.append(part)
            continue
        piece = required(part, "text", source, f"{position}.text[{i}]")
        pieces.append(str(piece))
        if part.get("href") and part["href"] != piece:
            links.append(part["href"])
    return "".join(pieces), links


def parse_date(message: dict, source: str, position: str) -> datetime:
    """When the message was sent, in UTC: `date_unixtime` when present, else `date` as UTC."""
    unixtime = message.get("date_unixtime")
    if unixtime is not None:
        try:
            return datetime.fromtimestamp(int(unixtime), UTC)
        except (TypeError, ValueError, OverflowError, OSError):
            raise problem(source, position, f"bad 'date_unixtime' {unixtime!r}") from None
    value = required(message, "date", source, position)
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise problem(source, position, f"bad 'date' {value!r}") from None


def chat_name(chat: dict) -> str | None:
    """The chat's title; Telegram leaves it out for the account's own Saved Messages."""
    if chat.get("name"):
        return chat["name"]
    return "Saved Messages" if chat.get("type") == "saved_messages" else None


def _user_id(from_id: Any) -> str | None:
    # "user123" is the Telegram user id 123, as the bot sees it; channels keep their prefix.
    if from_id is None:
        return None
    raw = str(from_id)
    rest = raw.removeprefix("user")
    return rest if rest != raw and rest.isdigit() else raw


def owner_ids(data: dict) -> set[str]:
    """The export owner's Telegram id as the export tells it: `personal_information` in a full
    export; else the one other speaker of a personal chat (its id is the peer's) or of Saved
    Messages. Empty when the export does not say (a single group chat)."""
    info = data.get("personal_information")
    if isinstance(info, dict) and info.get("user_id") is not None:
        return {str(info["user_id"])}
    found: set[str] = set()
    for _position, chat in chats(data, "export"):
        messages = chat.get("messages") if isinstance(chat.get("messages"), list) else []
        speakers = {_user_id(m.get("from_id")) for m in messages if isinstance(m, dict)} - {None}
        if chat.get("type") == "saved_messages" and len(speakers) == 1:
            found |= speakers
        elif chat.get("type") == "personal_chat" and str(chat.get("id")) in speakers:
            others = speakers - {str(chat.get("id"))}
            found |= others if len(others) == 1 else set()
    return found if len(found) == 1 else set()  # two "owners" means the guess is wrong


def ids_named(data: dict, name: str) -> dict[str, str]:
    """The Telegram ids of the senders called `name` (full name, else first name; case and
    accents aside), with the name each goes by."""
    from core.recall.lexical import fold

    wanted = " ".join(fold(name).split())
    full: dict[str, str] = {}
    first: dict[str, str] = {}
    for _position, chat in chats(data, "export"):
        for m in chat.get("messages") or []:
            if not isinstance(m, dict) or not m.get("from") or m.get("from_id") is None:
                continue
            sender = " ".join(fold(str(m["from"])).split())
            user_id = _user_id(m["from_id"])
            if sender == wanted:
                full[user_id] = str(m["from"])
            elif sender and sender.split()[0] == wanted:
                first[user_id] = str(m["from"])
    return full or (first if len(first) == 1 else {})


def senders(data: dict, limit: int = 12) -> list[str]:
    """Some of the export's sender names (for an error message that helps)."""
    names: dict[str, None] = {}
    for _position, chat in chats(data, "export"):
        for m in chat.get("messages") or []:
            if isinstance(m, dict) and m.get("from"):
                names.setdefault(str(m["from"]))
                if len(names) >= limit:
                    return list(names)
    return list(names)


def _capture(message: dict, chat: dict, source: str, position: str) -> CaptureIn | Skipped:
    message_id = required(message, "id", source, position)
    sent_at = parse_date(message, source, position)
    if message.get("type", "message") != "message":
        return Skipped("service")
    text, links = flatten_text(message.get("text"), source, position)
    media = {k: message[k] for k in MEDIA_KEYS if message.get(k) is not None}
    if not text.strip() and not media:
        return Skipped("empty")
    provenance: dict[str, Any] = {
        "import": source,
        "format": SURFACE,
        "chat_name": chat_name(chat),
        "chat_type": chat.get("type"),
        "date": message.get("date"),
    }
    provenance.update({k: message[k] for k in PROVENANCE_KEYS if message.get(k) is not None})
    if message.get("from_id") is not None:
        provenance["from_id"] = message["from_id"]
    if links:
        provenance["links"] = links
    reply_to = message.get("reply_to_message_id")
    return CaptureIn(
        surface=SURFACE,
        chat_id=str(chat["id"]),
        message_id=str(message_id),
        text=text,
        sent_at=sent_at,
        user_id=_user_id(message.get("from_id")),
        sender=message.get("from"),
        role="user",
        reply_to=None if reply_to is None else str(reply_to),
        media=media,
        provenance=provenance,
    )


def parse(data: dict, source: str) -> Iterator[CaptureIn | Skipped]:
    """Every message record of the export, in file order, as a capture or a skip."""
    for position, chat in chats(data, source):
        required(chat, "id", source, position)
        prefix = f"{position}.messages" if position else "messages"
        for i, message in enumerate(_messages(chat, source, position)):
            yield _capture(message, chat, source, f"{prefix}[{i}]")
