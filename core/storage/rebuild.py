"""Rebuilding every vector from SQLite, whatever state the vector store is in.

SQLite holds the text of every chunk, entry and session chunk, so the vector store is a cache
that can always be rebuilt: after a model change, a deleted directory, damaged HNSW segment
files or a garbage `chroma.sqlite3`. An embedded store that cannot be opened or read is moved
aside (kept for inspection, never deleted); a Chroma server's collections are dropped and
recreated instead, since its files are not Elora's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from core.errors import EloraError, StorageError
from core.storage.models import SessionChunk
from core.storage.vectors import COLLECTIONS

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BATCH = 64
Progress = Callable[[str, int, str], AbstractContextManager[Callable[[int], None]]]


@dataclass
class RebuildReport:
    """What a rebuild found and did; complete when every row got its vector back."""

    embedder: str
    problem: str | None = None
    moved_to: str | None = None
    chunks: int = 0
    indexed: int = 0
    entries: int = 0
    entries_indexed: int = 0
    session_chunks: int = 0
    session_indexed: int = 0

    @property
    def complete(self) -> bool:
        """Every chunk, entry and session chunk has a vector again."""
        return (
            self.indexed == self.chunks
            and self.entries_indexed == self.entries
            and self.session_indexed == self.session_chunks
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {**asdict(self), "complete": self.complete}


@contextmanager
def _silent(label: str, total: int, unit: str) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def unusable(services: Services) -> str | None:
    """Why the vector store cannot be opened or read (first failing collection), or None."""
    probe = getattr(services.vectors, "probe", services.vectors.count)
    for name in COLLECTIONS:
        try:
            probe(name)
        except EloraError as exc:
            return str(exc)
    return None


def _set_aside(services: Services, problem: str, say: Callable[[str], None]) -> str | None:
    """Make room for a fresh store: move an embedded one aside; a server keeps its files."""
    index = services.vectors
    if not getattr(index, "embedded", False):
        say(f"vector store unusable ({problem}); dropping and recreating its collections")
        return None
    stamp = services.clock.now().strftime("%Y%m%d-%H%M%S")
    try:
        moved = index.move_aside(stamp)
    except OSError as exc:
        raise StorageError(
            f"vector store at {index.location} is unusable ({problem}) and could not be moved "
            f"aside: {exc.strerror}; move or delete it, then run `elora reindex` again"
        ) from exc
    say(f"vector store unusable ({problem}); moved it aside to {moved}")
    return str(moved)


def rebuild_vectors(
    services: Services,
    say: Callable[[str], None] = log.info,
    progress: Progress = _silent,
) -> RebuildReport:
    """Rebuild the archive, memory and session vectors from SQLite with the configured embedder.

    `say` receives one line per notable step (a store moved aside); `progress(label, total,
    unit)` gives a context manager yielding `advance(n)`, as the CLI's progress bar does.
    """
    vs = services.vectorspace
    report = RebuildReport(embedder=vs.signature)
    report.problem = unusable(services)
    if report.problem:
        report.moved_to = _set_aside(services, report.problem, say)
    vs.reset_all()
    services.session_memory.purge_expired()  # what the purge job would drop is not rebuilt
    report.chunks = services.archive.mark_all_pending()
    report.entries = services.memory.mark_all_pending()
    sessions = services.session_memory.all_chunks()
    report.session_chunks = len(sessions)

    with progress("reindexing chunks", report.chunks, "chunks") as advance:
        report.indexed = services.archive.index_pending(on_progress=advance)
    with progress("reindexing memory entries", report.entries, "entries") as advance:
        report.entries_indexed = _index_entries(services, advance)
    with progress("reindexing session memory", report.session_chunks, "chunks") as advance:
        report.session_indexed = _index_sessions(services, sessions, advance)
    return report


def _index_entries(services: Services, advance: Callable[[int], None]) -> int:
    done = 0
    while True:
        rows = services.memory.pending(BATCH)
        if not rows:
            return done
        indexed = services.memory.index(rows)
        if indexed < len(rows):  # the embedder failed; the rest stays pending
            return done + indexed
        done += indexed
        advance(indexed)


def _index_sessions(
    services: Services, rows: list[SessionChunk], advance: Callable[[int], None]
) -> int:
    done = 0
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        metadatas = [
            {
                "user_id": r.user_id,
                "chat_id": r.chat_id,
                "source_id": r.source_id,
                "expires_at": int(r.expires_at.timestamp()),
            }
            for r in batch
        ]
        try:
            services.vectorspace.upsert(
                "ephemeral", [r.id for r in batch], [r.text for r in batch], metadatas
            )
        except EloraError as exc:
            log.warning("session memory reindex stopped after %d chunks: %s", done, exc)
            return done
        done += len(batch)
        advance(len(batch))
    return done
