"""The embedder and the vector index together, guarded against mixing two models' vectors."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text

from core.embeddings import Embedder
from core.errors import EmbedderMismatch
from core.storage.db import Database
from core.storage.vectors import COLLECTIONS, VectorHit, VectorIndex

log = logging.getLogger(__name__)

META_KEY = "embedder"


class VectorSpace:
    """Embeds text and stores/queries vectors; refuses to mix vectors of different models."""

    def __init__(self, db: Database, index: VectorIndex, embedder: Embedder):
        self.db = db
        self.index = index
        self.embedder = embedder
        self._checked = False

    @property
    def signature(self) -> str:
        """`name|dim` of the configured embedder, as recorded next to the vectors."""
        return f"{self.embedder.name}|{self.embedder.dim}"

    def recorded_signature(self) -> str | None:
        """The signature of the model that made the stored vectors, if any."""
        with self.db.session() as s:
            row = s.exec(text("SELECT value FROM meta WHERE key = :k"), params={"k": META_KEY})
            found = row.first()
        return found[0] if found else None

    def _record(self, signature: str) -> None:
        with self.db.session() as s:
            s.exec(
                text("INSERT OR REPLACE INTO meta (key, value) VALUES (:k, :v)"),
                params={"k": META_KEY, "v": signature},
            )

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
        """Nearest neighbours of a query text."""
        self.ensure_compatible()
        vector = self.embedder.embed_query(query)
        return self.index.query(collection, vector.tolist(), limit, where)

    def reset_all(self) -> None:
        """Drop every collection and record the configured embedder (start of a reindex)."""
        for name in COLLECTIONS:
            self.index.reset(name, {"embedder": self.embedder.name})
        self._record(self.signature)
        self._checked = True
