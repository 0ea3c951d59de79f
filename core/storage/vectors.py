"""The vector index: a small Protocol and its Chroma implementation (embedded or server).

Chroma holds ids, vectors and metadata only; the text lives in SQLite, so forgetting an entry
there leaves no readable copy behind.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from core.errors import StorageError

COLLECTIONS = ("memory", "archive", "ephemeral")


@dataclass(frozen=True)
class VectorHit:
    """One nearest neighbour: its id, cosine similarity and metadata."""

    id: str
    similarity: float
    metadata: dict[str, Any]


class VectorIndex(Protocol):
    """What Elora needs from a vector store."""

    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
    ) -> None: ...

    def query(
        self, collection: str, vector: Sequence[float], limit: int, where: dict | None = None
    ) -> list[VectorHit]: ...

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def count(self, collection: str) -> int: ...

    def reset(self, collection: str, metadata: dict[str, Any]) -> None: ...


class ChromaIndex:
    """Chroma collections `memory`, `archive` and `ephemeral`, cosine space, telemetry off."""

    def __init__(
        self, path: Path | None = None, url: str | None = None, prefix: str = "", space_meta=None
    ):
        self.path = path
        self.url = url
        self.prefix = prefix
        self._client = None
        self._collections: dict[str, Any] = {}
        # Chroma's client start is not thread-safe: two chats' first queries at once broke it.
        self._opening = threading.Lock()
        self._space_meta = dict(space_meta or {})

    @property
    def location(self) -> str:
        """Where the vectors live, for diagnostics."""
        return self.url or str(self.path)

    def _connect(self):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        try:
            if self.url:
                parsed = urlparse(self.url)
                return chromadb.HttpClient(
                    host=parsed.hostname,
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=settings,
                )
            self.path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.path), settings=settings)
        except Exception as exc:  # chroma raises plain exceptions for unreachable servers
            raise StorageError(f"vector store at {self.location}: {exc}") from exc

    @property
    def client(self):
        """The Chroma client, connected on first use (by one thread)."""
        if self._client is None:
            with self._opening:
                if self._client is None:
                    self._client = self._connect()
        return self._client

    def collection(self, name: str):
        """The named collection, created on first use with cosine distance."""
        if name not in COLLECTIONS:
            raise StorageError(f"unknown collection {name!r}")
        if name not in self._collections:
            client = self.client
            with self._opening:
                if name not in self._collections:
                    metadata = {"hnsw:space": "cosine", **self._space_meta}
                    self._collections[name] = client.get_or_create_collection(
                        self.prefix + name, embedding_function=None, metadata=metadata
                    )
        return self._collections[name]

    def upsert(self, collection, ids, vectors, metadatas) -> None:
        """Insert or replace vectors by id."""
        if not ids:
            return
        self.collection(collection).upsert(
            ids=list(ids),
            embeddings=[list(map(float, v)) for v in vectors],
            metadatas=list(metadatas),
        )

    def query(self, collection, vector, limit, where=None) -> list[VectorHit]:
        """The `limit` nearest vectors, optionally filtered by metadata."""
        col = self.collection(collection)
        if limit <= 0:
            return []
        result = col.query(
            query_embeddings=[list(map(float, vector))],
            n_results=limit,
            where=where or None,
            include=["metadatas", "distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0]
        metas = result["metadatas"][0]
        return [
            VectorHit(id=i, similarity=1.0 - float(d), metadata=dict(m or {}))
            for i, d, m in zip(ids, distances, metas, strict=True)
        ]

    def get_vectors(self, collection, ids) -> dict[str, list[float]]:
        """Stored vectors by id (missing ids are absent from the result)."""
        if not ids:
            return {}
        got = self.collection(collection).get(ids=list(ids), include=["embeddings"])
        return {i: list(v) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def delete(self, collection, ids) -> None:
        """Remove vectors by id (missing ids are ignored)."""
        if ids:
            self.collection(collection).delete(ids=list(ids))

    def count(self, collection) -> int:
        """How many vectors the collection holds."""
        return self.collection(collection).count()

    def reset(self, collection, metadata) -> None:
        """Drop and recreate a collection (used when the embedding model changes)."""
        existing = {getattr(c, "name", c) for c in self.client.list_collections()}
        if self.prefix + collection in existing:
            self.client.delete_collection(self.prefix + collection)
        self._collections.pop(collection, None)
        self._space_meta.update(metadata)
        self.collection(collection)
