"""Wire once: one Services object built from settings, handed to every surface."""

from __future__ import annotations

import logging
from functools import cached_property

from core.archive.spool import Spool
from core.clock import Clock, SystemClock
from core.config import Settings
from core.embedding_worker import EmbeddingWorker
from core.embeddings import Embedder, build_embedder
from core.storage.db import Database
from core.storage.vectors import ChromaIndex, VectorIndex

log = logging.getLogger(__name__)


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
        # Any committed write means the database is back: replay what waits in the spool.
        self.db.on_write(lambda: self.replayer.poke())
        if embedder is not None:
            self.embedder = EmbeddingWorker.wrap(embedder)
        if vectors is not None:
            self.vectors = vectors

    @cached_property
    def embedder(self) -> Embedder:
        """The configured embedding model (loaded lazily on first embedding), run by one
        worker thread that batches concurrent requests."""
        settings = self.settings
        return EmbeddingWorker(
            build_embedder(settings.embedder, settings.embedder_api_base, settings.embedder_engine)
        )

    @cached_property
    def vectors(self) -> VectorIndex:
        """The vector index: embedded Chroma under ELORA_HOME, or a Chroma server."""
        s = self.settings
        index = ChromaIndex(path=s.chroma_dir, url=s.chroma_url, prefix=s.chroma_prefix)
        if s.chroma_url:
            return index
        from core.storage.chroma_direct import DirectChroma

        return DirectChroma(index)  # everyday calls without importing chromadb

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

    @cached_property
    def replayer(self):
        """Replays the spool as soon as the database takes writes again."""
        from core.archive.replayer import SpoolReplayer

        return SpoolReplayer(self)

    @cached_property
    def memory(self):
        """Maintained memory entries (the canon)."""
        from core.memory.entries import MemoryStore

        return MemoryStore(self)

    @cached_property
    def session_memory(self):
        """Ephemeral per-session memory."""
        from core.memory.session import SessionMemory

        return SessionMemory(self)

    @cached_property
    def proposals(self):
        """Learning proposals waiting for review."""
        from core.learning.proposals import ProposalStore

        return ProposalStore(self)

    @cached_property
    def learner(self):
        """Extraction, consent, admission and proposals."""
        from core.learning.engine import Learner

        return Learner(self)

    @cached_property
    def held_forgets(self):
        """Undos of this process's forgets, held in its memory only (never on disk)."""
        from core.memory.unforget import HeldForgets

        return HeldForgets()

    @cached_property
    def traces(self):
        """Request traces and spend."""
        from core.traces import TraceStore

        return TraceStore(self)

    @cached_property
    def llm(self):
        """The LLM client (LiteLLM is imported on its first call).

        Every call through it, from any caller (pipeline, learning, council, jobs), obeys the
        daily spending cap.
        """
        from core.routing.client import LLMClient

        return LLMClient(self.settings, self.spend)

    @cached_property
    def spend(self):
        """The daily spending guard."""
        from core.routing.spend import SpendGuard

        return SpendGuard(self)

    @cached_property
    def profile(self):
        """The capability profile and routing gate."""
        from core.routing.profile import CapabilityProfile

        return CapabilityProfile(self)

    @cached_property
    def assistant(self):
        """The request pipeline every surface uses."""
        from core.pipeline import Assistant

        return Assistant(self)

    @cached_property
    def surfaces(self):
        """Per-chat settings, reply→trace map and handled updates."""
        from core.surfaces import SurfaceState

        return SurfaceState(self)

    def window(self, surface: str, chat_id: str, user_id: str | None = None):
        """The persisted conversation window of a chat."""
        from core.conversation import ConversationWindow

        return ConversationWindow(self, surface, chat_id, user_id)

    def warm_up(self) -> None:
        """Load what the first request would otherwise wait for: the model client library,
        the embedding model and the vector store (long-running surfaces call this at start)."""
        from core.routing.tiers import configured

        if configured(self.settings):
            from core.routing.client import _litellm

            _litellm()
        try:
            self.embedder.embed_query("warm-up")
            self.vectors.count("archive")
        except Exception as exc:  # best effort: the first request reports a real fault
            log.warning("warm-up incomplete: %s", exc)

    def redact(self, value):
        """`value` with every configured secret replaced (strings, lists and dicts, deeply)."""
        secrets = self.settings.secrets()
        if not secrets:
            return value
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, "[redacted]")
            return value
        if isinstance(value, list):
            return [self.redact(v) for v in value]
        if isinstance(value, dict):
            return {k: self.redact(v) for k, v in value.items()}
        return value

    def close(self) -> None:
        """Stop the background threads and release database connections."""
        if "replayer" in self.__dict__:
            self.replayer.close()
        if "embedder" in self.__dict__:
            self.embedder.close()
        self.db.close()


def open_services(**overrides) -> Services:
    """Load settings (raising ConfigError on a bad one), start a new home, build the services."""
    from core.config import load_settings
    from core.home import prepare_home

    settings = load_settings(**overrides)
    prepare_home(settings)
    return Services(settings)
