"""The vector index: a small Protocol and its Chroma implementation (embedded or server).

Chroma holds ids, vectors and metadata only; the text lives in SQLite, so forgetting an entry
there leaves no readable copy behind.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from core.errors import EloraError, StorageError, VectorStoreUnavailable

log = logging.getLogger(__name__)

COLLECTIONS = ("memory", "archive", "ephemeral", "turns")
# Neighbours asked of a collection when probing it: enough to notice an index that lost some.
PROBE_NEIGHBOURS = 10
# Chroma writes a collection's HNSW files every `sync_threshold` new vectors (1,000 by
# default); what came after stays in its log, and every process that opens the collection
# inserts those vectors into the index again before its first query: up to 999 inserts, most
# of a second for a one-shot `elora context` on a 10k-message home. 200 bounds that replay to
# a tenth of a second, for a save of the index files every 200 vectors.
SYNC_THRESHOLD = 200


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
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        where: dict | None = None,
        metadata: bool = True,
        among: Sequence[str] | None = None,
    ) -> list[VectorHit]: ...

    def get_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def count(self, collection: str) -> int: ...

    def reset(self, collection: str, metadata: dict[str, Any]) -> None: ...


def among_or_filtered(ask, where, among, guard, collection: str):
    """`ask(ids, where)` among these ids when given (an index's query for them), else, or when
    the index refuses them (an id it does not hold: not indexed yet, or just forgotten), with
    the `where` filter they stand for, under `guard()` (whatever it raises is a store failure;
    a refused id is not: the filtered query says whether the store itself failed)."""
    if among is not None:
        try:
            return ask(list(among), None)
        except Exception as exc:  # the filtered query below decides
            log.debug("%s: query among ids refused, filtered instead: %s", collection, exc)
    with guard():
        return ask(None, where)


class ChromaIndex:
    """Chroma collections `memory`, `archive` and `ephemeral`, cosine space, telemetry off.

    Every call is guarded: whatever Chroma raises (its own errors, a Rust panic from a damaged
    HNSW segment, a refused connection) becomes VectorStoreUnavailable, and the latest failure
    is remembered (`failure`) so recall can say it ran degraded.
    """

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
        self.failure: tuple[float, str] | None = None  # (time.monotonic(), message)

    @property
    def location(self) -> str:
        """Where the vectors live, for diagnostics (a server URL without any user:password)."""
        if self.url:
            parsed = urlparse(self.url)
            return parsed._replace(netloc=parsed.netloc.rpartition("@")[2]).geturl()
        return str(self.path)

    @property
    def embedded(self) -> bool:
        """True when the vectors are files under ELORA_HOME (not a Chroma server)."""
        return not self.url

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except EloraError:
            raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # pyo3's PanicException is not an Exception
            message = f"vector store at {self.location}: {what}: {_first_line(exc)}"
            self.failure = (time.monotonic(), message)
            raise VectorStoreUnavailable(message) from exc

    def _connect(self):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        with self._guard("cannot open"):
            if self.url:
                parsed = urlparse(self.url)
                return chromadb.HttpClient(
                    host=parsed.hostname,
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=settings,
                )
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                return chromadb.PersistentClient(path=str(self.path), settings=settings)
            except BaseException:
                # Chroma caches the half-started system by path; the next attempt (after
                # a repair) would reuse it and fail on a missing attribute.
                _drop_cached_system(self.path)
                raise

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
                    metadata = {
                        "hnsw:space": "cosine",
                        "hnsw:sync_threshold": SYNC_THRESHOLD,
                        **self._space_meta,
                    }
                    with self._guard(f"{name}: cannot open the collection"):
                        self._collections[name] = client.get_or_create_collection(
                            self.prefix + name, embedding_function=None, metadata=metadata
                        )
        return self._collections[name]

    def upsert(self, collection, ids, vectors, metadatas) -> None:
        """Insert or replace vectors by id."""
        if not ids:
            return
        col = self.collection(collection)
        with self._guard(f"{collection}: upsert"):
            col.upsert(
                ids=list(ids),
                embeddings=[list(map(float, v)) for v in vectors],
                metadatas=list(metadatas),
            )

    def query(
        self, collection, vector, limit, where=None, metadata=True, among=None
    ) -> list[VectorHit]:
        """The `limit` nearest vectors, optionally filtered by metadata; `metadata=False` leaves
        the hits' metadata empty (reading it costs several times the search itself). `among`:
        the ids `where` selects, when the caller knows them: searched among them directly
        (Chroma's metadata filter costs CPU in proportion to the whole collection); should the
        index refuse them (an id it does not hold: not indexed yet, or just forgotten), `where`
        decides."""
        col = self.collection(collection)
        if limit <= 0:
            return []
        if among is not None and not among:
            return []
        include = ["metadatas", "distances"] if metadata else ["distances"]
        vectors = [list(map(float, vector))]
        result = among_or_filtered(
            lambda ids, only: col.query(
                query_embeddings=vectors, ids=ids, n_results=limit, where=only, include=include
            ),
            where or None, among, lambda: self._guard(f"{collection}: query"), collection,
        )  # fmt: skip
        ids = result["ids"][0]
        distances = result["distances"][0]
        metas = result["metadatas"][0] if metadata else [None] * len(ids)
        return [
            VectorHit(id=i, similarity=1.0 - float(d), metadata=dict(m or {}))
            for i, d, m in zip(ids, distances, metas, strict=True)
        ]

    def get_vectors(self, collection, ids) -> dict[str, list[float]]:
        """Stored vectors by id (missing ids are absent from the result)."""
        if not ids:
            return {}
        col = self.collection(collection)
        with self._guard(f"{collection}: get"):
            got = col.get(ids=list(ids), include=["embeddings"])
        return {i: list(v) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def delete(self, collection, ids) -> None:
        """Remove vectors by id (missing ids are ignored)."""
        if ids:
            col = self.collection(collection)
            with self._guard(f"{collection}: delete"):
                col.delete(ids=list(ids))

    def count(self, collection) -> int:
        """How many vectors the collection holds."""
        col = self.collection(collection)
        with self._guard(f"{collection}: count"):
            return col.count()

    def probe(self, collection: str) -> int:
        """Count the collection and read it back through its index; return the count.

        A count alone is answered from Chroma's SQLite and can miss a damaged HNSW segment:
        reading one stored vector and searching with it loads the segment the way recall
        will, so a broken one fails here (VectorStoreUnavailable) instead of mid-request.
        """
        size = self.count(collection)
        if size == 0:
            return 0
        col = self.collection(collection)
        with self._guard(f"{collection}: read back"):
            sample = col.get(limit=1, include=["embeddings"])
            wanted = min(size, PROBE_NEIGHBOURS)
            found = col.query(query_embeddings=[list(sample["embeddings"][0])], n_results=wanted)
        if len(found["ids"][0]) < wanted:
            message = (
                f"vector store at {self.location}: {collection}: its index returned "
                f"{len(found['ids'][0])} of {wanted} neighbours (damaged segment files)"
            )
            self.failure = (time.monotonic(), message)
            raise VectorStoreUnavailable(message)
        return size

    def reset(self, collection, metadata) -> None:
        """Drop and recreate a collection (used when the embedding model changes)."""
        client = self.client
        with self._guard(f"{collection}: reset"):
            existing = {getattr(c, "name", c) for c in client.list_collections()}
            if self.prefix + collection in existing:
                client.delete_collection(self.prefix + collection)
        self._collections.pop(collection, None)
        self._space_meta.update(metadata)
        self.collection(collection)
        self.failure = None

    def close(self) -> None:
        """Let go of the client (and, embedded, of Chroma's open files)."""
        client, self._client = self._client, None
        self._collections.clear()
        if client is not None and hasattr(client, "close"):
            with suppress(Exception):  # closing a broken store must not hide why it broke
                client.close()
        if self.embedded and self.path is not None:
            _drop_cached_system(self.path)

    def move_aside(self, stamp: str) -> Path:
        """Embedded only: close and rename the directory to `<dir>.broken-<stamp>`; return it."""
        if not self.embedded or self.path is None:
            raise StorageError("a Chroma server's files are not Elora's to move")
        self.close()
        target = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.broken-{stamp}-{n}")
        if self.path.exists():
            self.path.rename(target)
        self.failure = None
        return target


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _drop_cached_system(path: Path) -> None:
    """Forget Chroma's process-wide system for this directory, stopping it if it runs."""
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    if system is not None:
        with suppress(Exception):  # a system that never started cannot stop cleanly
            system.stop()
