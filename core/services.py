"""Wire once: one Services object built from settings, handed to every surface."""

from __future__ import annotations

from functools import cached_property

from core.archive.spool import Spool
from core.clock import Clock, SystemClock
from core.config import Settings
from core.embeddings import Embedder, build_embedder
from core.storage.db import Database
from core.storage.vectors import ChromaIndex, VectorIndex


class Services:
    """The stores, models and clock of one Elora home; heavy parts are built on first use."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        vectors: VectorIndex | None = None,
    ):
        self.settings = settings
        self.clock = clock or SystemClock()
        self.db = Database(settings.resolved_database_url, settings.db_busy_timeout_ms)
        self.spool = Spool(settings.spool_dir)
        if embedder is not None:
            self.embedder = embedder
        if vectors is not None:
            self.vectors = vectors

    @cached_property
    def embedder(self) -> Embedder:
        """The configured embedding model (loaded lazily on first embedding)."""
        return build_embedder(self.settings.embedder, self.settings.embedder_api_base)

    @cached_property
    def vectors(self) -> VectorIndex:
        """The vector index: embedded Chroma under ELORA_HOME, or a Chroma server."""
        s = self.settings
        return ChromaIndex(path=s.chroma_dir, url=s.chroma_url, prefix=s.chroma_prefix)

    @cached_property
    def vectorspace(self):
        """Embedder + vector index, guarded against mixing models."""
        from core.vectorspace import VectorSpace

        return VectorSpace(self.db, self.vectors, self.embedder)

    @cached_property
    def archive(self):
        """Verbatim captures and their chunks."""
        from core.archive.store import Archive

        return Archive(self)

    def close(self) -> None:
        """Release database connections."""
        self.db.close()


def open_services(**overrides) -> Services:
    """Load settings (raising ConfigError on a bad one) and build the services."""
    from core.config import load_settings

    return Services(load_settings(**overrides))
