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
import re
import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, insert
from sqlmodel import col, delete, select

from core.learning.consent import FORGOTTEN, ConsentRefused
from core.recall.lexical import fold
from core.storage import meta
from core.storage.dialect import insert_ignoring
from core.storage.models import ForgetLog, Tombstone

if TYPE_CHECKING:
    from core.clock import Clock
    from core.services import Services
    from core.storage.db import Database
    from core.storage.models import MemoryEntry

KEY = "tombstone_key"


class Forgotten(ConsentRefused):
    """The text was forgotten by the operator; only an explicit remember brings it back."""


def normalise(text: str) -> str:
    """The form a text is hashed in: folded case and accents, words only, single spaces."""
    return " ".join(re.findall(r"\w+", fold(text or "")))


class Tombstones:
    """The tombstones of one home (owner of the `tombstones` table and of its key in `meta`)."""

    def __init__(self, db: Database, clock: Clock):
        self.db = db
        self.clock = clock

    def _key(self) -> bytes:
        """The home's secret, made on first use (a concurrent first use keeps the first one)."""
        kept = meta.get(self.db, KEY) or meta.put_once(self.db, KEY, secrets.token_hex(32))
        return bytes.fromhex(kept)

    def digest(self, text: str) -> str:
        """The keyed hash of a text's normalised form."""
        return hmac.new(self._key(), normalise(text).encode(), hashlib.sha256).hexdigest()

    def digests(self, texts: Iterable[str]) -> list[str]:
        """The keyed hashes of texts (each normalised form once)."""
        key = self._key()
        forms = {normalise(t) for t in texts} - {""}
        return [hmac.new(key, f.encode(), hashlib.sha256).hexdigest() for f in sorted(forms)]

    def bury(self, texts: Iterable[str]) -> int:
        """Leave a tombstone for each text; return how many are new."""
        digests = self.digests(texts)
        if not digests:
            return 0
        now = self.clock.now()
        with self.db.session(write=True) as session:
            stmt = select(Tombstone.digest).where(col(Tombstone.digest).in_(digests))
            known = set(session.exec(stmt))
            new = [d for d in digests if d not in known]
            if new:
                rows = [{"digest": d, "created_at": now} for d in new]
                session.exec(insert_ignoring(Tombstone, rows))
        return len(new)

    def put_back(self, digests: Iterable[str]) -> None:
        """Lay tombstones again by their digests (an undone remember had lifted them)."""
        rows = [{"digest": d, "created_at": self.clock.now()} for d in dict.fromkeys(digests)]
        if rows:
            with self.db.session(write=True) as session:
                session.exec(insert_ignoring(Tombstone, rows))

    def is_buried(self, text: str) -> bool:
        """Whether the operator forgot this text."""
        if not normalise(text):
            return False
        stmt = select(Tombstone.digest).where(Tombstone.digest == self.digest(text))
        with self.db.session() as session:
            return session.exec(stmt).first() is not None

    def refuse_if_buried(self, text: str) -> None:
        """Raise Forgotten when the text was forgotten (the one check before anything is
        filed)."""
        if self.is_buried(text):
            raise Forgotten("the operator forgot this; only an explicit remember brings it back")

    def lift(self, text: str) -> bool:
        """Remove a text's tombstone (an explicit remember); return whether there was one."""
        stmt = delete(Tombstone).where(Tombstone.digest == self.digest(text))
        with self.db.session(write=True) as session:
            return session.exec(stmt).rowcount > 0


def digest(services: Services, text: str) -> str:
    """The keyed hash of a text's normalised form."""
    return services.tombstones.digest(text)


def bury(services: Services, texts: Iterable[str]) -> int:
    """Leave a tombstone for each text; return how many are new."""
    return services.tombstones.bury(texts)


def bury_entry(services: Services, entry: MemoryEntry) -> None:
    """Tombstone what an entry about to be forgotten was called, and withhold its sources.

    The texts are its canonical text and those of the proposals it came from (a re-proposal
    repeats the proposal's wording, not the operator's edit). The messages it was drawn from
    stay archived but are no longer material for learning: a model would otherwise re-extract
    the same thing from them in other words."""
    proposal_id = (entry.attributes or {}).get("proposal_id")
    bury(
        services, [entry.canonical_text, *services.proposals.texts_of(entry.memory_id, proposal_id)]
    )
    sources = [
        s["capture_id"] for s in entry.sources or [] if isinstance(s, dict) and s.get("capture_id")
    ]
    services.archive.captures.withhold(sources, FORGOTTEN)


def bury_digests(services: Services, digests: Iterable[str]) -> None:
    """Put back tombstones by their digests (an undone remember had lifted them)."""
    services.tombstones.put_back(digests)


def is_buried(services: Services, text: str) -> bool:
    """Whether the operator forgot this text."""
    return services.tombstones.is_buried(text)


def refuse_if_buried(services: Services, text: str) -> None:
    """Raise Forgotten when the text was forgotten (the one check before anything is filed)."""
    services.tombstones.refuse_if_buried(text)


def lift(services: Services, text: str) -> bool:
    """Remove a text's tombstone (an explicit remember); return whether there was one."""
    return services.tombstones.lift(text)


def log_forget(
    conn: Connection, *, entry_uuid: str, with_sources: bool, matching: bool,
    removed_captures: int, removed_entries: int, at: datetime,
) -> None:  # fmt: skip
    """One forget_log row, inside the forget's transaction: the named entry's uuid (never a
    slug, which can carry words of the text) or '' for a phrase, and counts."""
    conn.execute(
        insert(ForgetLog).values(
            entry_uuid=entry_uuid, with_sources=with_sources, matching=matching,
            removed_captures=removed_captures, removed_entries=removed_entries, forgotten_at=at,
        )
    )  # fmt: skip
