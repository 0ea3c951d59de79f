"""Hybrid search over memory entries: vector neighbours (Chroma) and BM25 (FTS5), reranked by
calibrated cosine × importance weight. With core.memory.entries, the owner of memory_entries
and entries_fts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import EloraError
from core.memory.vocabulary import STATUSES
from core.recall.lexical import fts_query, normalise_bm25
from core.storage import fulltext
from core.storage.models import MemoryEntry

if TYPE_CHECKING:
    from core.storage.db import Database
    from core.vectorspace import VectorSpace

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


class EntrySearch:
    """Search for MemoryStore, which provides `db`, `vectorspace`, `importance_weight` and
    `by_uuids` (entries by uuid)."""

    db: Database
    vectorspace: VectorSpace
    importance_weight: dict[int, float]

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
                self.vectorspace.ensure_readable()
                qvec = self.vectorspace.embedder.embed_query(query)
            cosine = self._nearest(qvec, fetch, scopes, statuses, tiers)
        except EloraError as exc:
            log.warning("memory search degraded to lexical: %s", exc)
            degraded, qvec = True, None
        lexical = self._lexical(query, fetch, scopes, statuses, tiers)
        missing = [u for u in lexical if u not in cosine]
        if qvec is not None and missing:
            try:
                stored = self.vectorspace.index.get_vectors("memory", missing)
                for uuid, vec in stored.items():
                    cosine[uuid] = float(np.dot(np.asarray(vec, dtype=np.float32), qvec))
            except EloraError as exc:
                log.warning("could not score lexical hits by vector: %s", exc)
        # Ranked on the few fields the score reads; only the `limit` best are loaded whole.
        calibrate = self.vectorspace.embedder.calibrate
        ranked = []
        for uuid, fields in self._filter_fields(list(set(cosine) | set(lexical))).items():
            if not self._passes(fields, scopes, statuses, tiers):
                continue
            lex = lexical.get(uuid, 0.0)
            sim = cosine.get(uuid)
            base = LEXICAL_WEIGHT * lex + (VECTOR_WEIGHT * calibrate(sim) if sim is not None else 0)
            if degraded:
                base = lex
            weight = self.importance_weight.get(fields["importance"], 1.0)
            ranked.append((round(base * weight, 4), uuid, sim, lex))
        ranked.sort(key=lambda r: r[0], reverse=True)
        rows = self.by_uuids([uuid for _, uuid, _, _ in ranked[:limit]])
        hits = []
        for score, uuid, sim, lex in ranked[:limit]:
            row = rows.get(uuid)
            if row is None:  # forgotten since its fields were read
                continue
            # ... or changed: taken as it is now.
            now = {"status": row.status, "scope": row.scope, "tier": row.tier}
            if self._passes(now, scopes, statuses, tiers):
                hits.append(EntryHit(row, score, sim, lex))
        return hits, degraded

    def _nearest(self, qvec, fetch, scopes, statuses, tiers) -> dict[str, float]:
        """The `fetch` nearest entries that pass the filters, as {uuid: cosine}.

        Chroma's metadata pre-filter costs far more than the search itself on a large
        collection (about 30 ms of CPU against 3 ms at 10k entries), and the usual filter
        (status active) keeps nearly everything. So search unfiltered with headroom and filter
        the hits here (their fields read from the entries): when at least `fetch` of them pass,
        they are exactly the `fetch` nearest passing entries. Only when too few pass is Chroma
        asked to filter.
        """
        probe = max(fetch * PROBE_FACTOR, PROBE_MIN)
        index = self.vectorspace.index
        # Ids and distances only (Chroma's metadata costs several times the search): the
        # fields the filter reads come from the entries themselves.
        hits = index.query("memory", qvec.tolist(), probe, metadata=False)
        fields = self._filter_fields([h.id for h in hits])
        kept = [
            h
            for h in hits
            if h.id in fields and self._passes(fields[h.id], scopes, statuses, tiers)
        ]
        if len(kept) < fetch and len(hits) == probe:
            where = self._where(scopes, statuses, tiers)
            kept = index.query("memory", qvec.tolist(), fetch, where, metadata=False)
        return {h.id: h.similarity for h in kept[:fetch]}

    def _filter_fields(self, uuids: list[str]) -> dict[str, dict[str, Any]]:
        """Status, scope, tier (what `_passes` reads) and importance of these entries, by
        uuid."""
        if not uuids:
            return {}
        marks = ",".join("?" * len(uuids))
        with self.db.reading() as conn:
            rows = conn.exec_driver_sql(
                "SELECT uuid, status, scope, tier, importance FROM memory_entries "
                f"WHERE uuid IN ({marks})",
                tuple(uuids),
            ).all()
        return {
            r[0]: {"status": r[1], "scope": r[2], "tier": r[3], "importance": r[4]} for r in rows
        }

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
        with self.db.reading() as conn:
            rows = fulltext.matching(
                conn, "entries", match, select="e.uuid", alias="e",
                where=" AND ".join(where), params=params, limit=limit,
            )  # fmt: skip
        return dict(zip([r[0] for r in rows], normalise_bm25([r[1] for r in rows]), strict=True))
