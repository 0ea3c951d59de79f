"""The entries every pack reads whatever its question, kept between packs while the memory is
unchanged.

L0's axioms, L1's manifest and its predictions are the same few rows (and links) for every
question: reading and hydrating them cost a pack 5-10 ms. On SQLite, triggers move a number in
`memory_stamp` with every change to the entries or their links, by any process (migration 21);
a pack reads that number once and reuses what was read under it. The number is read before
the rows, in the same transaction: rows read under a number are the rows of that number. On
PostgreSQL there is no stamp and every pack reads afresh.

The entries handed out are shared between packs: read them, never change them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlmodel import Session

    from core.storage.db import Database
    from core.storage.models import EntryLink, MemoryEntry

Links = tuple[list["EntryLink"], dict[str, "MemoryEntry"]]


class StandingEntries:
    """Question-independent entry reads, cached under the memory stamp they were read at."""

    def __init__(self, db: Database):
        self.db = db
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._kept: dict[Any, Any] = {}
        self._stamped = db.dialect == "sqlite"

    def stamp(self) -> int | None:
        """The memory's current stamp (None: nothing can be cached, e.g. on PostgreSQL)."""
        if not self._stamped:
            return None
        with self.db.session() as session:
            return self._read_stamp(session)

    @staticmethod
    def _read_stamp(session: Session) -> int | None:
        # Migration 21 made the table (a home is migrated as its database is opened).
        sql = "SELECT version FROM memory_stamp WHERE id = 1"
        return session.connection().exec_driver_sql(sql).scalar()

    def entries(
        self, stamp: int | None, key: Any, read: Callable[[Session], list[MemoryEntry]]
    ) -> list[MemoryEntry]:
        """`read(session)`'s rows, from what was read under `stamp` when it is current."""
        kept = self._kept_at(stamp, key)
        if kept is not None:
            return kept
        with self.db.session() as session:
            now = self._read_stamp(session) if self._stamped else None
            rows = read(session)
            session.expunge_all()  # they outlive the session (and its commit)
        self._keep(now, key, rows)
        return rows

    def links(self, stamp: int | None, uuids: list[str], read: Callable[[], Links]) -> Links:
        """`read()`'s links of these entries (and the entries at their other ends), from what
        was read under `stamp` when it is current. Read after the stamp: a change in between
        moves the stamp past them, and the next pack reads them again."""
        key = ("links", tuple(uuids))
        kept = self._kept_at(stamp, key)
        if kept is not None:
            return kept
        found = read()
        self._keep(stamp, key, found)
        return found

    def _kept_at(self, stamp: int | None, key: Any) -> Any:
        if stamp is None:
            return None
        with self._lock:
            return self._kept.get(key) if self._stamp == stamp else None

    def _keep(self, stamp: int | None, key: Any, value: Any) -> None:
        if stamp is None:
            return
        with self._lock:
            if self._stamp != stamp:
                if self._stamp is not None and stamp < self._stamp:
                    return  # read under an older stamp than what is kept: leave it
                self._stamp, self._kept = stamp, {}
            self._kept[key] = value
