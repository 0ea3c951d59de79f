"""A chat of months of small talk around a few facts, archived and indexed (real keys and
vectors), as the update tests read it; and which of some facts a pack shows first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.core.memory.helpers import message


def fact_ids(facts: dict[str, tuple[str, datetime]]) -> dict[str, str]:
    """The message id of each fact, by name."""
    return {name: str(100 + n) for n, name in enumerate(facts)}


def archive_chat(
    services,
    chat_id: str,
    chatter: list[tuple[str, str]],
    facts: dict[str, tuple[str, datetime]],
    *,
    start: datetime,
    count: int,
    days_apart: int,
    sender_of: Callable[[str], str],
) -> None:
    """`count` turns of small talk ((text, sender), in turn), one every `days_apart` days from
    `start`, and the facts ({name: (text, sent at)}, said by `sender_of(name)`)."""
    captures = []
    for n in range(count):
        text, sender = chatter[n % len(chatter)]
        when = start + timedelta(days=days_apart * n, minutes=n)
        captures.append(message(str(500 + n), text, when, sender=sender, chat_id=chat_id))
    ids = fact_ids(facts)
    for name, (text, when) in facts.items():
        captures.append(message(ids[name], text, when, sender=sender_of(name), chat_id=chat_id))
    services.archive.store_batch(captures)
    services.archive.index_pending()


def first_of(order: list[str], ids: dict[str, str], *names: str) -> str:
    """Which of these facts comes first in a pack's order of message ids."""
    named = {ids[n]: n for n in names}
    return next(named[m] for m in order if m in named)
