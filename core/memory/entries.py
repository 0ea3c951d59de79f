"""The memory API: save (upsert by memory_id), get, list, topics, hybrid search."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlalchemy import Connection, String, text, type_coerce
from sqlmodel import col, delete, func, select, update

from core.errors import EloraError, InvalidInput
from core.ids import memory_uuid
from core.memory import versions
from core.memory.entry_search import EntrySearch
from core.memory.schema import IMPORTANCE_WEIGHT, EntryIn, text_key
from core.storage import fulltext
from core.storage.dialect import json_list_holds
from core.storage.fulltext import Match
from core.storage.models import EntryLink, MemoryEntry
from core.undo.context import current_change

if TYPE_CHECKING:
    from core.clock import Clock
    from core.storage.db import Database
    from core.vectorspace import VectorSpace

log = logging.getLogger(__name__)


def _epoch(value) -> int:
    return int(value.timestamp()) if value else 0


class MemoryStore(EntrySearch):
    """Entries in SQLite (text, FTS) and Chroma (vectors only); hybrid search comes from
    EntrySearch (core.memory.entry_search)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        vectorspace: VectorSpace,
        importance_weights: dict[int, float] | None = None,
    ):
        self.db = db
        self.clock = clock
        self.vectorspace = vectorspace  # its embedder and index serve search
        self.importance_weight = importance_weights or IMPORTANCE_WEIGHT

    # -- writing ---------------------------------------------------------------------------

    def save(self, data: EntryIn | dict[str, Any]) -> MemoryEntry:
        """Validate and upsert an entry (same memory_id → same uuid → replaced), then embed it."""
        try:
            entry_in = data if isinstance(data, EntryIn) else EntryIn.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            raise InvalidInput(f"invalid memory entry: {where}: {first['msg']}") from None
        uuid = memory_uuid(entry_in.memory_id)
        now = self.clock.now()
        with self.db.session(write=True) as session:
            row = session.exec(select(MemoryEntry).where(MemoryEntry.uuid == uuid)).first()
            values = entry_in.model_dump()
            created = row is None
            if row is None:
                row = MemoryEntry(uuid=uuid, created_at=now, **values)
            else:
                versions.keep_baseline(session, row)
                for key, value in values.items():
                    setattr(row, key, value)
            row.vector_state = "pending"
            session.add(row)
            session.flush()
            session.refresh(row)
            versions.record(session, row, created, now)
            session.expunge(row)
        self.index([row])
        return row

    def index(self, rows: list[MemoryEntry] | None = None) -> int:
        """Embed entries (given, or all pending) into the `memory` collection; return how many."""
        if rows is None:
            with self.db.session() as session:
                rows = list(
                    session.exec(select(MemoryEntry).where(MemoryEntry.vector_state == "pending"))
                )
                for r in rows:
                    session.expunge(r)
        if not rows:
            return 0
        try:
            self.vectorspace.upsert(
                "memory",
                [r.uuid for r in rows],
                [r.embedding_text for r in rows],
                [self._vector_meta(r) for r in rows],
            )
        except EloraError as exc:
            log.warning("memory indexing deferred for %d entries: %s", len(rows), exc)
            return 0
        uuids = [r.uuid for r in rows]
        with self.db.session() as session:
            for start in range(0, len(uuids), 500):
                part = col(MemoryEntry.uuid).in_(uuids[start : start + 500])
                session.exec(update(MemoryEntry).where(part).values(vector_state="indexed"))
        for r in rows:
            r.vector_state = "indexed"
        return len(rows)

    def pending(self, limit: int) -> list[MemoryEntry]:
        """The first entries still waiting for a vector, in the order they were stored."""
        stmt = select(MemoryEntry).where(MemoryEntry.vector_state == "pending")
        with self.db.session() as session:
            rows = list(session.exec(stmt.order_by(col(MemoryEntry.rowid)).limit(limit)))
            for row in rows:
                session.expunge(row)
        return rows

    def mark_all_pending(self) -> int:
        """Flag every entry for re-embedding (a reindex); return how many."""
        with self.db.session(write=True) as session:
            return session.exec(update(MemoryEntry).values(vector_state="pending")).rowcount

    @staticmethod
    def vector_meta(row: MemoryEntry) -> dict[str, Any]:
        """The metadata an entry's vector carries (no text: Chroma never holds a copy)."""
        return MemoryStore._vector_meta(row)

    @staticmethod
    def _vector_meta(row: MemoryEntry) -> dict[str, Any]:
        # Metadata only: no text, so Chroma never holds a readable copy of a memory.
        return {
            "tier": row.tier,
            "kind": row.kind,
            "scope": row.scope,
            "status": row.status,
            "importance": row.importance,
            "valid_from": _epoch(row.valid_from),
        }

    def set_status(self, memory_id: str, status: str, **fields: Any) -> MemoryEntry:
        """Change an entry's status (and e.g. valid_to) without touching its text."""
        entry = self.require(memory_id)
        with self.db.session(write=True) as session:
            row = session.get(MemoryEntry, entry.rowid)
            versions.keep_baseline(session, row)
            row.status = status
            for key, value in fields.items():
                setattr(row, key, value)
            session.add(row)
            session.flush()
            session.refresh(row)
            versions.record(session, row, False, self.clock.now())
            session.expunge(row)
        self.index([row])
        return row

    # -- reading ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryEntry | None:
        """The entry with this exact memory_id, or None."""
        with self.db.session() as session:
            row = session.exec(
                select(MemoryEntry).where(MemoryEntry.memory_id == memory_id)
            ).first()
            if row is not None:
                session.expunge(row)
            return row

    def require(self, memory_id: str) -> MemoryEntry:
        """The entry with this memory_id, or NotFound with a hint."""
        from core.errors import NotFound

        row = self.get(memory_id)
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r} (see `elora memories`)")
        return row

    def with_same_text(self, text_: str, scope: str, tier: str) -> MemoryEntry | None:
        """The active entry of a scope and tier saying exactly this, up to case, accents and
        punctuation (in another tier the same words are another memory: a rule and its fact)."""
        key = text_key(text_)
        if not key:
            return None
        # Every word must be there (FTS narrows the candidates); the keys decide.
        words = sorted(set(key.split()), key=len, reverse=True)[:8]
        match = Match([(w, False) for w in words], every=True)
        where = "e.scope = :scope AND e.tier = :tier AND e.status = 'active'"
        with self.db.session() as session:
            rows = fulltext.matching(
                session.connection(), "entries", match, select="e.uuid", alias="e",
                where=where, params={"scope": scope, "tier": tier}, order="e.created_at", limit=50,
            )  # fmt: skip
        uuids = [r[0] for r in rows]
        rows = self.by_uuids(uuids)
        return next(
            (rows[u] for u in uuids if u in rows and text_key(rows[u].canonical_text) == key), None
        )

    def by_uuids(self, uuids: list[str]) -> dict[str, MemoryEntry]:
        """Entries by uuid."""
        if not uuids:
            return {}
        with self.db.session() as session:
            rows = list(session.exec(select(MemoryEntry).where(col(MemoryEntry.uuid).in_(uuids))))
            for r in rows:
                session.expunge(r)
        return {r.uuid: r for r in rows}

    @staticmethod
    def _filtered(stmt, tier, scope, topic, status, dialect="sqlite"):
        if tier:
            stmt = stmt.where(MemoryEntry.tier == tier)
        if scope:
            stmt = stmt.where(MemoryEntry.scope == scope)
        if status:
            stmt = stmt.where(MemoryEntry.status == status)
        if topic:
            stmt = stmt.where(text(json_list_holds(dialect, "memory_entries.topics", "topic")))
            stmt = stmt.params(topic=topic.lower())
        return stmt

    def list(
        self,
        tier: str | None = None,
        scope: str | None = None,
        topic: str | None = None,
        status: str | None = "active",
        limit: int = 50,
        offset: int = 0,
    ) -> list[MemoryEntry]:
        """A page of entries, most recently touched first."""
        stmt = self._filtered(select(MemoryEntry), tier, scope, topic, status, self.db.dialect)
        stmt = stmt.order_by(col(MemoryEntry.last_touched).desc()).offset(offset).limit(limit)
        with self.db.session() as session:
            rows = list(session.exec(stmt))
            for r in rows:
                session.expunge(r)
        return rows

    def count(
        self,
        status: str | None = None,
        tier: str | None = None,
        scope: str | None = None,
        topic: str | None = None,
    ) -> int:
        """How many entries match these filters."""
        stmt = self._filtered(
            select(func.count()).select_from(MemoryEntry), tier, scope, topic, status,
            self.db.dialect,
        )  # fmt: skip
        with self.db.session() as session:
            return session.exec(stmt).one()

    def in_tier(self, tier: str, status: str = "active") -> list[MemoryEntry]:
        """Every entry of a tier with this status, in the order they were stored."""
        stmt = select(MemoryEntry).where(MemoryEntry.tier == tier, MemoryEntry.status == status)
        with self.db.session() as session:
            rows = list(session.exec(stmt.order_by(MemoryEntry.rowid)))
            for r in rows:
                session.expunge(r)
        return rows

    def rule_attributes(self, marker: str) -> list[dict[str, Any]]:
        """The attributes of the active procedural entries whose attributes mention `marker`
        (a cheap prefilter on the stored text: the caller checks the values)."""
        stmt = select(MemoryEntry.attributes).where(
            MemoryEntry.tier == "procedural",
            MemoryEntry.status == "active",
            type_coerce(MemoryEntry.attributes, String).contains(marker),
        )
        with self.db.session() as session:
            return [a or {} for a in session.exec(stmt)]

    def indexed_count(self) -> int:
        """Entries whose vector is stored."""
        stmt = select(func.count()).select_from(MemoryEntry)
        with self.db.session() as session:
            return session.exec(stmt.where(MemoryEntry.vector_state == "indexed")).one()

    def topics(self, scope: str | None = "global") -> list[dict[str, Any]]:
        """memory_id, tier, topics and importance of active entries (to find an exact id)."""
        stmt = select(
            MemoryEntry.memory_id,
            MemoryEntry.tier,
            MemoryEntry.topics,
            MemoryEntry.importance,
            MemoryEntry.scope,
        ).where(MemoryEntry.status == "active")
        if scope:
            stmt = stmt.where(MemoryEntry.scope == scope)
        stmt = stmt.order_by(col(MemoryEntry.importance).desc(), MemoryEntry.memory_id)
        with self.db.session() as session:
            return [
                {"memory_id": m, "tier": t, "topics": tp, "importance": i, "scope": sc}
                for m, t, tp, i, sc in session.exec(stmt)
            ]

    def links_of(self, uuids: list[str]) -> list[EntryLink]:
        """Links touching any of these entries."""
        if not uuids:
            return []
        with self.db.session() as session:
            rows = list(
                session.exec(
                    select(EntryLink).where(
                        col(EntryLink.from_uuid).in_(uuids) | col(EntryLink.to_uuid).in_(uuids)
                    )
                )
            )
            for r in rows:
                session.expunge(r)
        return rows

    def link(self, from_uuid: str, to_uuid: str, relation: str, note: str | None = None) -> None:
        """Record a typed relation between two entries."""
        link = EntryLink(from_uuid=from_uuid, to_uuid=to_uuid, relation=relation, note=note,
                         created_at=self.clock.now())  # fmt: skip
        with self.db.session(write=True) as session:
            session.add(link)
            session.flush()
            change = current_change()
            if change is not None:  # an undo of this action removes the link
                change.links.append(link.id)

    def unlink(self, link_ids: list[int]) -> None:
        """Remove links by id (those an undone action made)."""
        if link_ids:
            with self.db.session(write=True) as session:
                session.connection().execute(
                    delete(EntryLink).where(col(EntryLink.id).in_(link_ids))
                )

    def delete(self, uuid: str) -> bool:
        """Remove an entry that should never have been written (an undone approval): the row,
        its versions and links, its vector. Not a forget: nothing is tombstoned."""
        with self.db.session(write=True) as session:
            conn = session.connection()
            gone = conn.execute(delete(MemoryEntry).where(col(MemoryEntry.uuid) == uuid))
            versions.delete_of(conn, [uuid])
            conn.execute(
                delete(EntryLink).where(
                    (col(EntryLink.from_uuid) == uuid) | (col(EntryLink.to_uuid) == uuid)
                )
            )
        try:
            self.vectorspace.index.delete("memory", [uuid])
        except EloraError as exc:  # no text in it; `elora reindex` drops the stray vector
            log.warning("vector of removed entry %s not deleted: %s", uuid, exc)
        return gone.rowcount > 0


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------


def scan_entries(conn: Connection) -> Iterator[tuple]:
    """(uuid, memory_id, canonical_text, embedding_text, attributes, sources) of every entry,
    the JSON columns as stored text (searched as they are stored)."""
    stmt = select(
        MemoryEntry.uuid, MemoryEntry.memory_id, MemoryEntry.canonical_text,
        MemoryEntry.embedding_text, type_coerce(MemoryEntry.attributes, String),
        type_coerce(MemoryEntry.sources, String),
    )  # fmt: skip
    yield from conn.execute(stmt)


def canonical_texts(conn: Connection, uuids: list[str]) -> list[str]:
    """The canonical texts of these entries."""
    texts: list[str] = []
    for start in range(0, len(uuids), 500):
        part = uuids[start : start + 500]
        stmt = select(MemoryEntry.canonical_text).where(col(MemoryEntry.uuid).in_(part))
        texts += [text for (text,) in conn.execute(stmt) if text]
    return texts


def delete_entries(conn: Connection, uuids: list[str]) -> None:
    """Delete entries and every link touching them."""
    for start in range(0, len(uuids), 500):
        part = uuids[start : start + 500]
        conn.execute(delete(MemoryEntry).where(col(MemoryEntry.uuid).in_(part)))
        conn.execute(
            delete(EntryLink).where(
                col(EntryLink.from_uuid).in_(part) | col(EntryLink.to_uuid).in_(part)
            )
        )


def scan_link_notes(conn: Connection) -> Iterator[tuple]:
    """(id, from_uuid, to_uuid, note) of every link carrying a note."""
    stmt = select(EntryLink.id, EntryLink.from_uuid, EntryLink.to_uuid, EntryLink.note)
    yield from conn.execute(stmt.where(col(EntryLink.note).is_not(None)))


def rewrite_link(conn: Connection, link_id: int, values: dict[str, Any]) -> None:
    """New values for some columns of one link."""
    conn.execute(update(EntryLink).where(col(EntryLink.id) == link_id).values(**values))


def optimize_search(conn: Connection) -> None:
    """Merge the entries' full-text segments so deleted terms leave the files (FTS5; on
    PostgreSQL a forget rewrites the tables afterwards, core.memory.erase)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("INSERT INTO entries_fts(entries_fts) VALUES ('optimize')")
