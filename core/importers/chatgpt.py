"""ChatGPT exports: `conversations.json`, a list of conversations stored as message trees."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from core.archive.records import CaptureIn
from core.importers.sources import Skipped, problem, required

SURFACE = "chatgpt"
ROLES = ("user", "assistant")
# Part types that carry no readable text but name an attachment worth remembering.
ATTACHMENT_KEYS = ("asset_pointer", "name", "file_name")


def conversations(data: Any, source: str) -> list[dict]:
    """The conversations, checked to be a list of objects with a `mapping`."""
    if not isinstance(data, list):
        raise problem(source, "", "expected a list of conversations")
    for i, conversation in enumerate(data):
        mapping = required(conversation, "mapping", source, f"[{i}]")
        if not isinstance(mapping, dict):
            raise problem(source, f"[{i}].mapping", "expected an object of nodes")
        for node_id, node in mapping.items():
            if not isinstance(node, dict):
                raise problem(source, f"[{i}].mapping[{node_id!r}]", "expected an object")
    return data


def count(data: Any, source: str) -> tuple[int, int]:
    """How many conversations and message nodes the export holds."""
    found = conversations(data, source)
    return len(found), sum(len(c["mapping"]) for c in found)


def branch(mapping: dict, current: str | None, source: str, position: str) -> list[str]:
    """Node ids of the conversation as last shown: from the root down to `current_node`.

    Edited prompts and regenerated answers leave side branches in the tree; the export marks
    the one on screen with `current_node`. Without it, the last child is followed at each step.
    """
    downward = current is None
    if downward:
        roots = [k for k, node in mapping.items() if not node.get("parent")]
        if not roots:
            raise problem(source, f"{position}.mapping", "no root node and no 'current_node'")
        current = roots[0]
    path: list[str] = []
    node_id, seen = current, set()
    while node_id is not None:
        if node_id in seen or node_id not in mapping:
            raise problem(source, f"{position}.mapping", f"broken link at node {node_id!r}")
        seen.add(node_id)
        path.append(node_id)
        if downward:
            children = mapping[node_id].get("children") or [None]
            node_id = children[-1]
        else:
            node_id = mapping[node_id].get("parent")
    return path if downward else path[::-1]


def message_text(content: Any) -> tuple[str, list[str]]:
    """The readable text of a message and the names of its non-text parts (images, files)."""
    if not isinstance(content, dict):
        return "", []
    if isinstance(content.get("text"), str) and not content.get("parts"):
        return content["text"], []
    texts: list[str] = []
    attachments: list[str] = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            if part.strip():
                texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and part["text"].strip():
                texts.append(part["text"])
            name = next((part[k] for k in ATTACHMENT_KEYS if part.get(k)), None)
            if name:
                attachments.append(str(name))
    return "\n\n".join(texts), attachments


def _hidden(message: dict) -> bool:
    metadata = message.get("metadata") or {}
    return bool(metadata.get("is_visually_hidden_from_conversation")) or message.get(
        "recipient", "all"
    ) not in ("all", None)


def _time(value: Any, fallback: datetime | None, source: str, position: str) -> datetime:
    if value is None:
        if fallback is None:
            raise problem(source, position, "missing 'create_time'")
        return fallback
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        raise problem(source, position, f"bad 'create_time' {value!r}") from None


def _capture(message, conversation, chat_id, started, reply_to, source, position):
    message_id = required(message, "id", source, position)
    author = required(message, "author", source, position)
    role = author.get("role") if isinstance(author, dict) else None
    text, attachments = message_text(message.get("content"))
    for attachment in (message.get("metadata") or {}).get("attachments") or []:
        if isinstance(attachment, dict) and attachment.get("name"):
            attachments.append(str(attachment["name"]))
    if role not in ROLES or _hidden(message) or not (text.strip() or attachments):
        return Skipped("empty")
    metadata = message.get("metadata") or {}
    provenance = {"import": source, "format": SURFACE, "chat_name": conversation.get("title")}
    if metadata.get("model_slug"):
        provenance["model"] = metadata["model_slug"]
    return CaptureIn(
        surface=SURFACE,
        chat_id=chat_id,
        message_id=str(message_id),
        text=text,
        sent_at=_time(message.get("create_time"), started, source, position),
        sender="ChatGPT" if role == "assistant" else None,
        role=role,
        operator=role == "user",  # whoever exported ChatGPT is the one who asked
        reply_to=reply_to,
        media={"attachments": attachments} if attachments else {},
        provenance=provenance,
    )


def parse(data: Any, source: str) -> Iterator[CaptureIn | Skipped]:
    """Every node of every conversation: captures for the shown user/assistant messages."""
    for i, conversation in enumerate(conversations(data, source)):
        position = f"[{i}]"
        chat_id = conversation.get("conversation_id") or conversation.get("id")
        if not chat_id:
            raise problem(source, position, "missing 'id'")
        mapping = conversation["mapping"]
        started = conversation.get("create_time")
        started = None if started is None else _time(started, None, source, position)
        shown = branch(mapping, conversation.get("current_node"), source, position)
        previous: str | None = None
        for node_id in shown:
            node_pos = f"{position}.mapping[{node_id!r}]"
            message = mapping[node_id].get("message")
            if message is None:
                yield Skipped("empty")
                continue
            item = _capture(
                message, conversation, str(chat_id), started, previous, source, node_pos
            )
            if isinstance(item, CaptureIn):
                previous = item.message_id
            yield item
        # Nodes of side branches (edits, regenerations) are counted but not archived.
        for _ in range(len(mapping) - len(shown)):
            yield Skipped("branch")
