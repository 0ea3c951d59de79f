"""Using the embedded Chroma store without importing the chromadb package.

`import chromadb` costs about a second (its Python API layer, OpenTelemetry, auth plugins)
before a one-shot command such as `elora context` or `elora remember` has done anything, while
the store itself is Chroma's Rust engine, which loads in a tenth of that. `DirectChroma` sends
the everyday calls (query, get, count, upsert, delete on existing collections) straight to
that engine, configured as chromadb configures it. Anything else (creating or resetting a
collection, closing, moving a broken store aside) is the full client's: the first such
call hands the process over to it for good, so a process never holds two views of the files;
the everyday calls then go to the engine inside the client, on the collections it opened.
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.errors import EloraError, VectorStoreUnavailable
from core.storage.vectors import (
    COLLECTIONS,
    PROBE_NEIGHBOURS,
    SYNC_THRESHOLD,
    ChromaIndex,
    VectorHit,
    among_or_filtered,
)

log = logging.getLogger(__name__)

TENANT, DATABASE = "default_tenant", "default_database"  # chromadb's defaults


# One view of a directory per process: the engine opened on it (shared by every DirectChroma
# of the process), or, once any of them needed the client, the client only. Two engines on
# the same files in one process disagree about what is on disk.
_LOCK = threading.Lock()
_ENGINES: dict[str, Any] = {}
_CLIENT_ONLY: set[str] = set()


class DirectChroma:
    """An embedded ChromaIndex whose everyday calls skip the chromadb package."""

    def __init__(self, index: ChromaIndex):
        self.index = index
        self._key = str(index.path.resolve()) if index.path is not None else ""
        self._ids: dict[str, str] = {}

    @property
    def direct(self) -> bool:
        """Whether calls go to Chroma's engine right now (False: the full client)."""
        return self._key in _ENGINES and self._key not in _CLIENT_ONLY

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.index, name)
        if callable(value):  # the client's own operation: from now on, the client only
            self._hand_over()
        return value

    # -- the everyday calls ----------------------------------------------------------------

    def query(
        self, collection, vector, limit, where=None, metadata=True, among=None
    ) -> list[VectorHit]:
        """The `limit` nearest vectors, optionally filtered by metadata, or among these ids
        (see ChromaIndex.query)."""
        engine, collection_id = self._target(collection)
        if engine is None:
            return self._client().query(collection, vector, limit, where, metadata, among)
        if collection_id is None or limit <= 0 or (among is not None and not among):
            return []
        include = ["metadatas", "distances"] if metadata else ["distances"]
        vectors = [list(map(float, vector))]
        result = among_or_filtered(
            lambda ids, only: engine.query(
                collection_id, ids, vectors, limit, json.dumps(only) if only else None, None,
                include, TENANT, DATABASE,
            ),
            where, among, lambda: self._guard(collection, "query"), collection,
        )  # fmt: skip
        ids = result.ids[0]
        metas = result.metadatas[0] if metadata else [None] * len(ids)
        return [
            VectorHit(id=i, similarity=1.0 - float(d), metadata=dict(m or {}))
            for i, d, m in zip(ids, result.distances[0], metas, strict=True)
        ]

    def get_vectors(self, collection, ids) -> dict[str, list[float]]:
        """Stored vectors by id (missing ids are absent from the result)."""
        engine, collection_id = self._target(collection)
        if engine is None:
            return self._client().get_vectors(collection, ids)
        if collection_id is None or not ids:
            return {}
        with self._guard(collection, "get"):
            got = engine.get(
                collection_id, list(ids), None, None, 0, None, ["embeddings"], TENANT, DATABASE
            )
        return {i: list(v) for i, v in zip(got.ids, got.embeddings, strict=True)}

    def count(self, collection) -> int:
        """How many vectors the collection holds."""
        engine, collection_id = self._target(collection)
        if engine is None:
            return self._client().count(collection)
        if collection_id is None:
            return 0
        with self._guard(collection, "count"):
            return int(engine.count(collection_id, TENANT, DATABASE))

    def upsert(self, collection, ids, vectors, metadatas) -> None:
        """Insert or replace vectors by id (a new collection is the client's to create)."""
        if not ids:
            return
        engine, collection_id = self._target(collection)
        if engine is None or collection_id is None:
            self._client().upsert(collection, ids, vectors, metadatas)
            return
        with self._guard(collection, "upsert"):
            engine.upsert(
                collection_id, list(ids), [list(map(float, v)) for v in vectors],
                list(metadatas), None, None, TENANT, DATABASE,
            )  # fmt: skip

    def delete(self, collection, ids) -> None:
        """Remove vectors by id (missing ids are ignored)."""
        if not ids:
            return
        engine, collection_id = self._target(collection)
        if engine is None:
            self._client().delete(collection, ids)
            return
        if collection_id is not None:
            with self._guard(collection, "delete"):
                engine.delete(collection_id, list(ids), None, None, None, TENANT, DATABASE)

    def probe(self, collection: str) -> int:
        """Count the collection and search with one of its vectors, as ChromaIndex.probe does
        (a damaged segment fails here rather than mid-request); return the count."""
        engine, collection_id = self._target(collection)
        if engine is None:
            return self._client().probe(collection)
        size = self.count(collection)
        if size == 0 or collection_id is None:
            return size
        with self._guard(collection, "read back"):
            sample = engine.get(
                collection_id, None, None, 1, 0, None, ["embeddings"], TENANT, DATABASE
            )
            wanted = min(size, PROBE_NEIGHBOURS)
            found = engine.query(
                collection_id, None, [list(map(float, sample.embeddings[0]))], wanted,
                None, None, [], TENANT, DATABASE,
            )  # fmt: skip
        if len(found.ids[0]) < wanted:
            message = (
                f"vector store at {self.index.location}: {collection}: its index returned "
                f"{len(found.ids[0])} of {wanted} neighbours (damaged segment files)"
            )
            self.index.failure = (time.monotonic(), message)
            raise VectorStoreUnavailable(message)
        return size

    def reset(self, collection, metadata) -> None:
        """Drop and recreate a collection (the client's work)."""
        self._client().reset(collection, metadata)

    # -- the engine ------------------------------------------------------------------------

    def _client(self) -> _GuardedClient:
        """The full client, from now on the only way in (one view of the files per process)."""
        self._hand_over()
        return _GuardedClient(self)

    def _hand_over(self) -> None:
        with _LOCK:
            _CLIENT_ONLY.add(self._key)
            _ENGINES.pop(self._key, None)  # freed once no call in flight still uses it
        self._ids.clear()

    def _target(self, collection: str) -> tuple[Any, str | None]:
        """The engine (None: the client's turn) and the collection's id (None: not created)."""
        engine = self._open()
        if engine is None:
            return self._clients_engine(collection)
        found = self._ids.get(collection)
        if found is None:
            # Listed, not looked up: a lookup of a missing collection raises chromadb's
            # NotFoundError, whose import is the whole chromadb package.
            with self._guard(collection, "open"):
                listed = engine.list_collections(None, 0, TENANT, DATABASE)
            names = {c.name: str(c.id) for c in listed}
            self._shorten_logs(engine, listed)
            found = names.get(self.index.prefix + collection)
            if found is None:
                return engine, None
            self._ids[collection] = found
        return engine, found

    def _clients_engine(self, collection: str) -> tuple[Any, str | None]:
        """Once the client holds the store, the engine inside it (the same view of the files)
        for a collection the client has opened: its Python layer cost a bot as much CPU per
        message as a recall search. (None, None) leaves the call to the client."""
        if self.index.url:
            return None, None
        opened = self.index._collections.get(collection)
        server = getattr(self.index._client, "_server", None)
        bindings = getattr(server, "bindings", None)  # gone once the client is stopped
        if opened is None or bindings is None:
            return None, None
        return bindings, str(opened.id)

    def _shorten_logs(self, engine, listed) -> None:
        """Collections made with Chroma's default sync threshold take SYNC_THRESHOLD (see
        core.storage.vectors), once per store: the next process to open one saves its index,
        and the ones after it replay at most that many vectors from the log."""
        ours = {self.index.prefix + name for name in COLLECTIONS}
        change = json.dumps({"hnsw": {"sync_threshold": SYNC_THRESHOLD}})
        for c in listed:
            hnsw = (getattr(c, "configuration", None) or {}).get("hnsw") or {}
            if c.name in ours and hnsw.get("sync_threshold", 0) > SYNC_THRESHOLD:
                try:
                    engine.update_collection(str(c.id), None, None, change)
                except Exception as exc:  # a setting for speed: reads go on without it
                    log.info("Chroma's sync threshold of %s left as it is: %s", c.name, exc)

    def _open(self):
        if self.index.url or self._key in _CLIENT_ONLY:
            return None
        engine = _ENGINES.get(self._key)
        if engine is not None:
            return engine
        path = self.index.path
        if _client_running(path) or not (path / "chroma.sqlite3").exists():
            # The client has this store open in the process already (its view counts), or
            # nothing is stored yet and the client must create the store.
            return None
        with _LOCK:
            if self._key in _CLIENT_ONLY:
                return None
            if self._key not in _ENGINES:
                try:
                    _ENGINES[self._key] = _open_engine(path)
                except Exception as exc:  # e.g. the bindings changed: the client decides
                    log.info("Chroma's engine not opened directly, using the client: %s", exc)
                    _CLIENT_ONLY.add(self._key)
                    return None
            return _ENGINES[self._key]

    @contextmanager
    def _guard(self, collection: str, what: str) -> Iterator[None]:
        """Whatever the engine raises (a Rust panic too) becomes VectorStoreUnavailable, and
        the index remembers it (recall then says it ran degraded)."""
        try:
            yield
        except (EloraError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # pyo3's PanicException is not an Exception
            text = (str(exc).strip() or type(exc).__name__).splitlines()[0][:300]
            message = f"vector store at {self.index.location}: {collection}: {what}: {text}"
            self.index.failure = (time.monotonic(), message)
            raise VectorStoreUnavailable(message) from exc


class _GuardedClient:
    """The wrapped index's calls, with whatever Chroma raises turned into
    VectorStoreUnavailable."""

    def __init__(self, direct: DirectChroma):
        self.direct = direct

    def __getattr__(self, name: str):
        call = getattr(self.direct.index, name)

        def guarded(collection, *args, **kwargs):
            with self.direct._guard(collection, name):
                return call(collection, *args, **kwargs)

        return guarded


def _client_running(path: Path) -> bool:
    """Whether chromadb's client has this directory open in this process."""
    shared = sys.modules.get("chromadb.api.shared_system_client")
    if shared is None:
        return False  # chromadb not even imported
    systems = getattr(shared.SharedSystemClient, "_identifier_to_system", None)
    if systems is None:
        return True  # another chromadb version: assume it might
    return any(Path(key).resolve() == path.resolve() for key in list(systems) if key)


def _open_engine(path):
    """Chroma's Rust engine on a persistent directory, configured as chromadb configures it."""
    import chromadb_rust_bindings as rust

    config = rust.SqliteDBConfig(
        hash_type=rust.MigrationHash.MD5,
        migration_mode=rust.MigrationMode.Apply,
        url=str(path / "chroma.sqlite3"),
    )
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return rust.Bindings(
        allow_reset=False, sqlite_db_config=config, persist_path=str(path),
        hnsw_cache_size=files // 5,  # chromadb's rule: five files per HNSW index
    )  # fmt: skip
