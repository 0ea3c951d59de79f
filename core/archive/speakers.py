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

if TYPE_CHECKING:
    from core.services import Services

META_KEY = "operator_telegram_ids"


def known_operator_ids(services: Services) -> set[str]:
    """Every Telegram id known to be the operator's (settings and past imports)."""
    ids = {str(i) for i in services.settings.operator_ids()}
    rows = services.db.rows("SELECT value FROM meta WHERE key = ?", (META_KEY,))
    if rows:
        ids |= {str(i) for i in json.loads(rows[0][0])}
    return ids


def record_operator_ids(services: Services, ids: Iterable[str]) -> int:
    """Remember ids an import revealed as the operator's, then resolve the archive; return how
    many messages changed."""
    new = {str(i) for i in ids}
    if new:
        rows = services.db.rows("SELECT value FROM meta WHERE key = ?", (META_KEY,))
        kept = set(json.loads(rows[0][0])) if rows else set()
        if not new <= kept:
            services.db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (META_KEY, json.dumps(sorted(kept | new))),
            )
    return refresh(services)


def refresh(services: Services) -> int:
    """Mark the operator's Telegram messages, and the others' where nobody was known before;
    return how many messages changed (an earlier decision is never reversed)."""
    ids = sorted(known_operator_ids(services))
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    changed = services.db.execute(
        f"UPDATE captures SET is_operator = TRUE WHERE surface = 'telegram' AND role = 'user' "
        f"AND user_id IN ({marks}) AND is_operator IS NOT TRUE",
        tuple(ids),
    )
    return changed + services.db.execute(
        f"UPDATE captures SET is_operator = FALSE WHERE surface = 'telegram' AND role = 'user' "
        f"AND user_id IS NOT NULL AND user_id NOT IN ({marks}) AND is_operator IS NULL",
        tuple(ids),
    )


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
