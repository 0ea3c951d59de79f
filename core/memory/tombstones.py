"""Tombstones: what the operator forgot stays forgotten.

Forgetting an entry leaves a keyed hash (HMAC-SHA256) of each text it went by — its canonical
text and the proposal texts it was approved from — never the text itself. Creating a proposal
or approving one checks the hash, so no job, extraction, model tool or mirror import brings a
forgotten text back. The key is a random secret kept in the `meta` table of the same home: the
rows alone cannot be read back or checked against guesses elsewhere; whoever holds the whole
database can only confirm an exact sentence they already know.

Only an explicit `remember` (the CLI command, Telegram's /remember, a never-store rule) lifts a
tombstone: an explicit command is consent, given again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.learning.consent import FORGOTTEN, ConsentRefused
from core.recall.lexical import fold
from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services
    from core.storage.models import MemoryEntry

KEY = "tombstone_key"


class Forgotten(ConsentRefused):
    """The text was forgotten by the operator; only an explicit remember brings it back."""


def normalise(text: str) -> str:
    """The form a text is hashed in: folded case and accents, words only, single spaces."""
    return " ".join(re.findall(r"\w+", fold(text or "")))


def _key(services: Services) -> bytes:
    """The home's secret, made on first use (a concurrent first use keeps the first one)."""
    rows = services.db.rows("SELECT value FROM meta WHERE key = ?", (KEY,))
    if not rows:
        services.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (KEY, secrets.token_hex(32)),
        )
        rows = services.db.rows("SELECT value FROM meta WHERE key = ?", (KEY,))
    return bytes.fromhex(rows[0][0])


def digest(services: Services, text: str) -> str:
    """The keyed hash of a text's normalised form."""
    return hmac.new(_key(services), normalise(text).encode(), hashlib.sha256).hexdigest()


def _digests(services: Services, texts: Iterable[str]) -> list[str]:
    key = _key(services)
    forms = {normalise(t) for t in texts} - {""}
    return [hmac.new(key, f.encode(), hashlib.sha256).hexdigest() for f in sorted(forms)]


def bury(services: Services, texts: Iterable[str]) -> int:
    """Leave a tombstone for each text; return how many are new."""
    now = db_time(services.clock.now())
    added = 0
    for d in _digests(services, texts):
        added += services.db.execute(
            "INSERT INTO tombstones (digest, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (d, now),
        )
    return added


def bury_entry(services: Services, entry: MemoryEntry) -> None:
    """Tombstone what an entry about to be forgotten was called, and withhold its sources.

    The texts are its canonical text and those of the proposals it came from (a re-proposal
    repeats the proposal's wording, not the operator's edit). The messages it was drawn from
    stay archived but are no longer material for learning: a model would otherwise re-extract
    the same thing from them in other words."""
    texts = [entry.canonical_text]
    for text, candidate in services.db.rows(
        "SELECT text, candidate FROM proposals WHERE memory_id = ? OR id = ?",
        (entry.memory_id, (entry.attributes or {}).get("proposal_id") or ""),
    ):
        wording = (json.loads(candidate or "{}") or {}).get("text")
        texts += [t for t in (text, wording) if t and isinstance(t, str)]
    bury(services, texts)
    sources = [
        s["capture_id"] for s in entry.sources or [] if isinstance(s, dict) and s.get("capture_id")
    ]
    for start in range(0, len(sources), 500):
        part = sources[start : start + 500]
        services.db.execute(
            f"UPDATE captures SET consent = ? WHERE consent IS NULL AND id IN "
            f"({','.join('?' * len(part))})",
            (FORGOTTEN, *part),
        )


def bury_digests(services: Services, digests: Iterable[str]) -> None:
    """Put back tombstones by their digests (an undone remember had lifted them)."""
    now = db_time(services.clock.now())
    for d in digests:
        services.db.execute(
            "INSERT INTO tombstones (digest, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (d, now),
        )


def is_buried(services: Services, text: str) -> bool:
    """Whether the operator forgot this text."""
    if not normalise(text):
        return False
    return bool(
        services.db.rows("SELECT 1 FROM tombstones WHERE digest = ?", (digest(services, text),))
    )


def refuse_if_buried(services: Services, text: str) -> None:
    """Raise Forgotten when the text was forgotten (the one check before anything is filed)."""
    if is_buried(services, text):
        raise Forgotten("the operator forgot this; only an explicit remember brings it back")


def lift(services: Services, text: str) -> bool:
    """Remove a text's tombstone (an explicit remember); return whether there was one."""
    return (
        services.db.execute("DELETE FROM tombstones WHERE digest = ?", (digest(services, text),))
        > 0
    )
