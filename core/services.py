"""Wire once: one Services object built from settings, handed to every surface.

This is the one place that knows how the parts fit: each store is built here with only what it
uses (its database, clock, vector space, a few settings), so the stores never reach for each
other through a services object. Surfaces receive it and call the front door (core.app)."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from core.archive.spool import Spool
from core.clock import Clock, SystemClock
from core.config import Settings
from core.embedding_worker import EmbeddingWorker
from core.embeddings import Embedder, build_embedder
from core.storage.db import Database
from core.storage.vectors import ChromaIndex, VectorIndex

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from core.routing.client import ModelClient


class Services:
    """The stores, models and clock of one Elora home; heavy parts are built on first use."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        vectors: VectorIndex | None = None,
        llm: ModelClient | None = None,
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
        if llm is not None:
            self.llm = llm

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

        return VectorSpace(self.db, self.vectors, self.embedder, expected=self._indexed)

    def _indexed(self) -> dict[str, int]:
        """Vectors each collection should hold, as the owners of the tables count them."""
        return {
            "archive": self.archive.indexed_count(),
            "memory": self.memory.indexed_count(),
            "ephemeral": self.session_memory.count(),
            "turns": self.archive.turn_vector_count(),
        }

    @cached_property
    def archive(self):
        """Verbatim captures and their chunks."""
        from core.archive.chunking import ChunkSizes
        from core.archive.store import Archive

        s = self.settings
        sizes = ChunkSizes(
            window_messages=s.window_messages,
            window_chars=s.window_chars,
            window_gap=timedelta(minutes=s.window_gap_minutes),
            chunk_chars=s.chunk_chars,
            overlap=s.chunk_overlap_chars,
        )
        # The replayer and the traces are reached lazily: most runs spool nothing.
        return Archive(
            self.db, self.clock, self.spool, self.vectorspace, sizes,
            spooled=lambda: self.replayer.spooled(),
            store_traces=lambda items: self.traces.store_spooled(items),
        )  # fmt: skip

    @cached_property
    def replayer(self):
        """Replays the spool as soon as the database takes writes again."""
        from core.archive.replayer import SpoolReplayer

        return SpoolReplayer(self.spool, lambda: self.archive.replay_spool())

    @cached_property
    def memory(self):
        """Maintained memory entries (the canon)."""
        from core.memory.entries import MemoryStore

        s = self.settings
        return MemoryStore(self.db, self.clock, self.vectorspace, s.importance_weights)

    @cached_property
    def standing(self):
        """The entries every pack reads whatever its question, kept while the memory stays."""
        from core.memory.standing import StandingEntries

        return StandingEntries(self.db)

    @cached_property
    def session_memory(self):
        """Ephemeral per-session memory."""
        from core.memory.session import SessionMemory

        s = self.settings
        return SessionMemory(
            self.db, self.clock, self.vectorspace, s.session_ttl_hours, s.session_threshold
        )

    @cached_property
    def proposals(self):
        """Learning proposals waiting for review."""
        from core.learning.proposals import ProposalStore

        return ProposalStore(self.db, self.clock, self.tombstones)

    @cached_property
    def tombstones(self):
        """What the operator forgot (keyed hashes), checked before anything is filed."""
        from core.memory.tombstones import Tombstones

        return Tombstones(self.db, self.clock)

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

        return TraceStore(
            self.db,
            self.clock,
            self.settings.secrets(),
            self.spool,
            lambda: self.replayer.spooled(),
        )

    @cached_property
    def llm(self) -> ModelClient:
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

        s = self.settings
        return SpendGuard(self.traces.spent_today, s.daily_spend_cap, s.pro_spend_share)

    @cached_property
    def profile(self):
        """The capability profile and routing gate."""
        from core.routing.profile import CapabilityProfile

        s = self.settings
        return CapabilityProfile(
            self.db, self.clock, alpha=s.profile_alpha, gate_lambda=s.gate_lambda,
            gate_theta=s.gate_theta,
        )  # fmt: skip

    @cached_property
    def assistant(self):
        """The request pipeline every surface uses."""
        from core.pipeline import Assistant, toolbox
        from core.recall import pack
        from core.routing.tools import ToolContext

        return Assistant(
            self.settings, self.clock, archive=self.archive, windows=self.window, llm=self.llm,
            recall=lambda question, **options: pack.build_pack(self, question, **options),
            tools=lambda **turn: toolbox(ToolContext(self, **turn)),
            profile=self.profile, spend=self.spend, learner=self.learner, traces=self.traces,
        )  # fmt: skip

    @cached_property
    def chats(self):
        """Per-chat settings, reply→trace map and handled updates."""
        from core.chats import ChatState

        return ChatState(self.db, self.clock)

    def window(self, surface: str, chat_id: str, user_id: str | None = None):
        """The persisted conversation window of a chat."""
        from core.conversation import ConversationWindow

        return ConversationWindow(
            self.db, self.clock, self.session_memory, self.settings.model_distillation,
            surface, chat_id, user_id,
        )  # fmt: skip

    def warm_up(self) -> None:
        """Load what the first request would otherwise wait for: the model client library,
        the embedding model, the vector store and where each day's messages start (the first
        present-state question reads them all: 130 ms at 100k messages); long-running surfaces
        call this at start."""
        from core.routing.tiers import configured

        if configured(self.settings):
            from core.routing.client import _litellm

            _litellm()
        try:
            self.embedder.embed_query("warm-up")
            self.vectors.count("archive")
            if self.db.dialect == "sqlite":
                from core.recall.later_start import first_rowid_since
                from core.storage.db import db_time

                with self.db.session() as session:
                    first_rowid_since(session.connection(), db_time(self.clock.now()))
        except Exception as exc:  # best effort: the first request reports a real fault
            log.warning("warm-up incomplete: %s", exc)

    def close(self) -> None:
        """Stop the background threads and release database connections."""
        if "archive" in self.__dict__ and "indexer" in self.archive.__dict__:
            self.archive.indexer.close()
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
