"""The embedder and the vector index together, guarded against mixing two models' vectors."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.embeddings import Embedder
from core.errors import EloraError, EmbedderMismatch, VectorStoreUnavailable
from core.storage import meta
from core.storage.db import Database
from core.storage.vectors import COLLECTIONS, VectorHit, VectorIndex

log = logging.getLogger(__name__)

META_KEY = "embedder"
# How long a health verdict is trusted before the store is probed again (a long-running bot
# notices a repaired store within this time; one CLI run probes once).
HEALTH_TTL_SECONDS = 60.0
# Recall turns lexical when a collection holds less than this share of the vectors SQLite
# says it should: a few missing vectors only hide a few chunks from semantic search, a
# deleted or emptied store hides nearly all of them.
SHORT_SHARE = 0.9
# Session vectors may be missing by design (saved while the embedder was down): only these
# collections decide whether recall can trust the vectors.
RECALL_COLLECTIONS = ("archive", "memory")
FIX = "run `elora reindex`"


@dataclass
class CollectionHealth:
    """One collection: vectors held (None when it cannot be read), vectors expected, error."""

    name: str
    vectors: int | None
    expected: int
    error: str | None = None

    @property
    def missing(self) -> int:
        """Vectors SQLite expects that the collection does not hold."""
        return max(0, self.expected - (self.vectors or 0))

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "vectors": self.vectors,
            "expected": self.expected,
            "missing": self.missing,
            "error": self.error,
        }


@dataclass
class VectorHealth:
    """The vector store compared with SQLite: per collection, and any error opening it."""

    location: str
    collections: dict[str, CollectionHealth] = field(default_factory=dict)
    checked_at: float = 0.0

    @property
    def errors(self) -> list[str]:
        """Every collection that could not be read, with why."""
        return [c.error for c in self.collections.values() if c.error]

    @property
    def ok(self) -> bool:
        """Every collection readable and holding every vector SQLite expects."""
        return not self.errors and not any(c.missing for c in self.collections.values())

    def recall_problem(self) -> str | None:
        """Why recall must not trust the vectors (failing, or far short), or None."""
        if self.errors:
            return f"vector store unavailable ({self.errors[0]}): {FIX}"
        for name in RECALL_COLLECTIONS:
            c = self.collections.get(name)
            if c is not None and c.expected and (c.vectors or 0) < c.expected * SHORT_SHARE:
                return (
                    f"vector store incomplete: {name} holds {c.vectors:,} of {c.expected:,} "
                    f"vectors at {self.location}: {FIX}"
                )
        return None

    def summary(self) -> str:
        """One line: counts per collection, then what is wrong and the fix."""
        parts = []
        for name, c in self.collections.items():
            held = "unreadable" if c.error else f"{c.vectors:,}"
            parts.append(f"{name} {held}/{c.expected:,}")
        line = f"{self.location}: " + ", ".join(parts)
        if self.errors:
            return f"{line}; {self.errors[0]}: {FIX}"
        missing = sum(c.missing for c in self.collections.values())
        if missing:
            return f"{line}; {missing:,} vectors missing: {FIX}"
        return line


class VectorSpace:
    """Embeds text and stores/queries vectors; refuses to mix vectors of different models."""

    def __init__(
        self,
        db: Database,
        index: VectorIndex,
        embedder: Embedder,
        expected: Callable[[], dict[str, int]] | None = None,
    ):
        self.db = db
        self.index = index
        self.embedder = embedder
        # What each collection should hold, counted in SQLite (the source of truth) by the
        # tables' owners: {collection: rows marked indexed}.
        self.expected = expected or (lambda: {})
        self._checked = False
        self._health: VectorHealth | None = None
        self._health_lock = threading.Lock()

    @property
    def signature(self) -> str:
        """`name|dim` of the configured embedder, as recorded next to the vectors."""
        return f"{self.embedder.name}|{self.embedder.dim}"

    def recorded_signature(self) -> str | None:
        """The signature of the model that made the stored vectors, if any."""
        return meta.get(self.db, META_KEY)

    def _record(self, signature: str) -> None:
        meta.put(self.db, META_KEY, signature)

    def ensure_compatible(self) -> None:
        """Raise EmbedderMismatch if another embedder made the stored vectors."""
        if self._checked:
            return
        recorded = self.recorded_signature()
        if recorded is not None and recorded != self.signature:
            raise EmbedderMismatch(
                f"stored vectors were made by {recorded}, the configured embedder is "
                f"{self.signature}: run `elora reindex` to rebuild them"
            )
        self._checked = recorded is not None

    def health(self, refresh: bool = False) -> VectorHealth:
        """Each collection probed and counted against SQLite; cached for HEALTH_TTL_SECONDS.

        A failure seen by any vector call since the last verdict triggers a fresh probe.
        Never raises for a broken store: the errors are in the verdict.
        """
        with self._health_lock:
            cached = self._health
            failure = getattr(self.index, "failure", None)
            fresh = (
                cached is not None
                and time.monotonic() - cached.checked_at < HEALTH_TTL_SECONDS
                and (failure is None or failure[0] <= cached.checked_at)
            )
            if refresh or not fresh:
                self._health = cached = self._probe()
            return cached

    def _probe(self) -> VectorHealth:
        health = VectorHealth(getattr(self.index, "location", "vector index"))
        probe = getattr(self.index, "probe", self.index.count)
        expected = self.expected()
        for name in COLLECTIONS:
            try:
                held, error = probe(name), None
            except EloraError as exc:
                held, error = None, str(exc)
            health.collections[name] = CollectionHealth(name, held, expected.get(name, 0), error)
        health.checked_at = time.monotonic()
        return health

    def ensure_readable(self) -> None:
        """Raise unless the stored vectors can be searched: EmbedderMismatch (another model
        made them) or VectorStoreUnavailable (the store fails, or holds far fewer vectors than
        SQLite says were indexed)."""
        self.ensure_compatible()
        problem = self.health().recall_problem()
        if problem:
            raise VectorStoreUnavailable(problem)

    def failure_since(self, moment: float) -> str | None:
        """The latest vector-store failure seen after `moment` (time.monotonic()), if any."""
        failure = getattr(self.index, "failure", None)
        return failure[1] if failure and failure[0] >= moment else None

    def _claim(self) -> None:
        """Record the embedder once the first vectors it made are stored."""
        if not self._checked:
            self._record(self.signature)
            self._checked = True

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Embed passages and store their vectors (never their text)."""
        self.ensure_compatible()
        vectors = self.embedder.embed_passages(list(texts))
        self.index.upsert(collection, ids, vectors.tolist(), metadatas)
        self._claim()

    def embed_passages(self, texts: Sequence[str]):
        """Vectors of passages from the configured embedder (checked against the stored ones)."""
        self.ensure_compatible()
        return self.embedder.embed_passages(list(texts))

    def upsert_vectors(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Store vectors computed with embed_passages (the turn keys' means, for the archive)."""
        self.ensure_compatible()
        self.index.upsert(collection, ids, [list(map(float, v)) for v in vectors], metadatas)
        self._claim()

    def query(
        self, collection: str, query: str, limit: int, where: dict | None = None
    ) -> list[VectorHit]:
        """Nearest neighbours of a query text (VectorStoreUnavailable when it can't be trusted)."""
        self.ensure_readable()
        vector = self.embedder.embed_query(query)
        return self.index.query(collection, vector.tolist(), limit, where)

    def reset_all(self) -> None:
        """Drop every collection and record the configured embedder (start of a reindex)."""
        for name in COLLECTIONS:
            self.index.reset(name, {"embedder": self.embedder.name})
        self._record(self.signature)
        self._checked = True
        with self._health_lock:
            self._health = None
