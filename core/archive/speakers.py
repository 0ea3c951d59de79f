"""Who said it: the operator, or someone else, named.

Each capture records its speaker (`user_id`, `sender`) and whether the operator said it
(`is_operator`). The operator's Telegram ids come from the settings (ELORA_OPERATOR_TELEGRAM_IDS,
else the first allowlisted id) and from what imports revealed (a Telegram export's owner,
`elora import --me NAME`), which is kept in the `meta` table. Messages archived before the
operator was known are resolved once they are (`refresh`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.storage import meta

if TYPE_CHECKING:
    from core.services import Services

META_KEY = "operator_telegram_ids"


def known_operator_ids(services: Services) -> set[str]:
    """Every Telegram id known to be the operator's (settings and past imports)."""
    ids = {str(i) for i in services.settings.operator_ids()}
    stored = meta.get(services.db, META_KEY)
    if stored:
        ids |= {str(i) for i in json.loads(stored)}
    return ids


def record_operator_ids(services: Services, ids: Iterable[str]) -> int:
    """Remember ids an import revealed as the operator's, then resolve the archive; return how
    many messages changed."""
    new = {str(i) for i in ids}
    if new:
        stored = meta.get(services.db, META_KEY)
        kept = set(json.loads(stored)) if stored else set()
        if not new <= kept:
            meta.put(services.db, META_KEY, json.dumps(sorted(kept | new)))
    return refresh(services)


def refresh(services: Services) -> int:
    """Mark the operator's Telegram messages, and the others' where nobody was known before;
    return how many messages changed (an earlier decision is never reversed)."""
    ids = sorted(known_operator_ids(services))
    if not ids:
        return 0
    return services.archive.captures.mark_operators(ids)


def is_operator_speaker(operator_ids: set[str], user_id: str | None) -> bool | None:
    """Whether a Telegram speaker is the operator, given the known ids (None: cannot tell)."""
    if not operator_ids or user_id is None:
        return None
    return str(user_id) in operator_ids


def speaker_label(name: str | None, limit: int = 60) -> str | None:
    """A speaker's name as one plain line for a prompt header (names come from outside)."""
    if not name:
        return None
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    cleaned = cleaned.replace('"', "'").replace("[", "(").replace("]", ")").lstrip("#>- ")
    return cleaned[:limit] or None
