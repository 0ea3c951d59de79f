"""The memory API: save (upsert by memory_id), get, list, topics, hybrid search."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError
from sqlalchemy import text
from sqlmodel import col, func, select

from core.errors import EloraError, InvalidInput
from core.ids import memory_uuid
from core.memory import versions
from core.memory.schema import IMPORTANCE_WEIGHT, STATUSES, EntryIn, text_key
from core.recall.lexical import fts_query, normalise_bm25
from core.storage import fulltext
from core.storage.db import run
from core.storage.dialect import json_list_holds
from core.storage.fulltext import Match
from core.storage.models import EntryLink, MemoryEntry
from core.undo.context import current_change

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

VECTOR_WEIGHT = 0.75
LEXICAL_WEIGHT = 0.25
# Unfiltered vector probe: this many times the candidates wanted, and at least PROBE_MIN.
PROBE_FACTOR = 4
PROBE_MIN = 100


@dataclass
class EntryHit:
    """A recalled entry with how it scored."""

    entry: MemoryEntry
    score: float
    similarity: float | None
    lexical: float


def _epoch(value) -> int:
    return int(value.timestamp()) if value else 0


class MemoryStore:
    """Entries in SQLite (text, FTS) and Chroma (vectors only)."""

    def __init__(self, services: Services):
        self.services = services
        self.db = services.db
        self.importance_weight = services.settings.importance_weights or IMPORTANCE_WEIGHT

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
        now = self.services.clock.now()
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
            self.services.vectorspace.upsert(
                "memory",
                [r.uuid for r in rows],
                [r.embedding_text for r in rows],
                [self._vector_meta(r) for r in rows],
            )
        except EloraError as exc:
            log.warning("memory indexing deferred for %d entries: %s", len(rows), exc)
            return 0
        with self.db.session() as session:
            run(
                session.connection(),
                "UPDATE memory_entries SET vector_state = 'indexed' WHERE uuid = ?",
                [(r.uuid,) for r in rows],
            )
        for r in rows:
            r.vector_state = "indexed"
        return len(rows)

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
            versions.record(session, row, False, self.services.clock.now())
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
                         created_at=self.services.clock.now())  # fmt: skip
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
                run(
                    session.connection(),
                    "DELETE FROM entry_links WHERE id = ?",
                    [(i,) for i in link_ids],
                )

    def delete(self, uuid: str) -> bool:
        """Remove an entry that should never have been written (an undone approval): the row,
        its versions and links, its vector. Not a forget: nothing is tombstoned."""
        with self.db.session(write=True) as session:
            conn = session.connection()
            gone = run(conn, "DELETE FROM memory_entries WHERE uuid = ?", (uuid,))
            run(conn, "DELETE FROM entry_versions WHERE entry_uuid = ?", (uuid,))
            run(conn, "DELETE FROM entry_links WHERE from_uuid = ? OR to_uuid = ?", (uuid, uuid))
        try:
            self.services.vectors.delete("memory", [uuid])
        except EloraError as exc:  # no text in it; `elora reindex` drops the stray vector
            log.warning("vector of removed entry %s not deleted: %s", uuid, exc)
        return gone.rowcount > 0

    # -- search ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 5,
        *,
        scopes: list[str] | None = None,
        statuses: tuple[str, ...] = ("active",),
        tiers: list[str] | None = None,
        query_vector: np.ndarray | None = None,
    ) -> tuple[list[EntryHit], bool]:
        """Hybrid search: over-fetch 3×limit by vector and by BM25, rerank by
        calibrated cosine × importance weight (plus a lexical share); returns (hits, degraded).
        """
        fetch = max(3 * limit, limit)
        degraded = False
        cosine: dict[str, float] = {}
        qvec = query_vector
        try:
            if qvec is None:
                self.services.vectorspace.ensure_readable()
                qvec = self.services.embedder.embed_query(query)
            cosine = self._nearest(qvec, fetch, scopes, statuses, tiers)
        except EloraError as exc:
            log.warning("memory search degraded to lexical: %s", exc)
            degraded, qvec = True, None
        lexical = self._lexical(query, fetch, scopes, statuses, tiers)
        missing = [u for u in lexical if u not in cosine]
        if qvec is not None and missing:
            try:
                stored = self.services.vectors.get_vectors("memory", missing)
                for uuid, vec in stored.items():
                    cosine[uuid] = float(np.dot(np.asarray(vec, dtype=np.float32), qvec))
            except EloraError as exc:
                log.warning("could not score lexical hits by vector: %s", exc)
        rows = self.by_uuids(list(set(cosine) | set(lexical)))
        calibrate = self.services.embedder.calibrate
        hits = []
        for uuid, row in rows.items():
            if row.status not in statuses or (scopes and row.scope not in scopes):
                continue
            if tiers and row.tier not in tiers:
                continue
            lex = lexical.get(uuid, 0.0)
            sim = cosine.get(uuid)
            base = LEXICAL_WEIGHT * lex + (VECTOR_WEIGHT * calibrate(sim) if sim is not None else 0)
            if degraded:
                base = lex
            weight = self.importance_weight.get(row.importance, 1.0)
            hits.append(EntryHit(row, round(base * weight, 4), sim, lex))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit], degraded

    def _nearest(self, qvec, fetch, scopes, statuses, tiers) -> dict[str, float]:
        """The `fetch` nearest entries that pass the filters, as {uuid: cosine}.

        Chroma's metadata pre-filter costs far more than the search itself on a large
        collection (about 30 ms of CPU against 3 ms at 10k entries), and the usual filter
        (status active) keeps nearly everything. So search unfiltered with headroom and filter
        the hits' metadata here: when at least `fetch` of them pass, they are exactly the
        `fetch` nearest passing entries. Only when too few pass is Chroma asked to filter.
        """
        probe = max(fetch * PROBE_FACTOR, PROBE_MIN)
        hits = self.services.vectors.query("memory", qvec.tolist(), probe)
        kept = [h for h in hits if self._passes(h.metadata, scopes, statuses, tiers)]
        if len(kept) < fetch and len(hits) == probe:
            where = self._where(scopes, statuses, tiers)
            kept = self.services.vectors.query("memory", qvec.tolist(), fetch, where)
        return {h.id: h.similarity for h in kept[:fetch]}

    @staticmethod
    def _passes(meta: dict[str, Any], scopes, statuses, tiers) -> bool:
        """The same test as `_where`, applied to one hit's metadata."""
        return (
            (not statuses or meta.get("status") in statuses)
            and (not scopes or meta.get("scope") in scopes)
            and (not tiers or meta.get("tier") in tiers)
        )

    def fulltext(self, query: str, limit: int = 50, status: str | None = None) -> list[MemoryEntry]:
        """Entries matching the words of a query (FTS5 / BM25), best first."""
        statuses = (status,) if status else STATUSES
        ranked = self._lexical(query, limit, None, statuses, None)
        rows = self.by_uuids(list(ranked))
        return [rows[u] for u in ranked if u in rows]

    @staticmethod
    def _where(scopes, statuses, tiers) -> dict | None:
        clauses: list[dict] = []
        if statuses:
            clauses.append({"status": {"$in": list(statuses)}})
        if scopes:
            clauses.append({"scope": {"$in": list(scopes)}})
        if tiers:
            clauses.append({"tier": {"$in": list(tiers)}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def _lexical(self, query, limit, scopes, statuses, tiers) -> dict[str, float]:
        match = fts_query(query)
        if not match:
            return {}
        where, params = [], {}
        for name, values in (("status", statuses), ("scope", scopes), ("tier", tiers)):
            if values:
                marks, named = fulltext.in_list(name, list(values))
                where.append(f"e.{name} IN {marks}")
                params.update(named)
        with self.db.session() as session:
            rows = fulltext.matching(
                session.connection(), "entries", match, select="e.uuid", alias="e",
                where=" AND ".join(where), params=params, limit=limit,
            )  # fmt: skip
        return dict(zip([r[0] for r in rows], normalise_bm25([r[1] for r in rows]), strict=True))
