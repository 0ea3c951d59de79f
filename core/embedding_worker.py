"""One thread for the embedder: every caller's texts are queued, and what queued up together is
embedded in one batch (queries with queries, passages with passages).

The e5 engine is CPU-bound and uses every core for one call, so two calls at once only fight
over the cores; a batch of 16 queries costs much less than 16 single calls. When many chats
are served at once, their questions and new messages meet here and share batches, and no
database or network thread ever waits behind an embedding while holding a slot of its own.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Texts per engine call: larger merged batches are split (keeps one call's latency bounded).
MAX_BATCH = 128
# Passages per engine call between two looks at the queue: a query waits at most this many.
PASSAGE_SLICE = 8


class EmbeddingWorker:
    """An Embedder that hands its work to one background thread, batching concurrent calls.

    It exposes the wrapped embedder's name, dim, calibrate and any other attribute unchanged,
    so it can stand wherever the embedder did."""

    def __init__(self, embedder: Any):
        self.inner = embedder
        self._queue: queue.SimpleQueue[tuple[str, list[str], Future] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    @staticmethod
    def wrap(embedder: Any) -> EmbeddingWorker:
        """`embedder` behind a worker (itself if it already is one)."""
        return embedder if isinstance(embedder, EmbeddingWorker) else EmbeddingWorker(embedder)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: name, dim, kernel, test counters…
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        """The wrapped embedder's name."""
        return self.inner.name

    @property
    def dim(self) -> int:
        """The wrapped embedder's vector size."""
        return self.inner.dim

    def calibrate(self, similarity: float, kind: str = "query") -> float:
        """The wrapped embedder's calibration (pure arithmetic, no queueing)."""
        return self.inner.calibrate(similarity, kind)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query (batched with concurrent queries)."""
        return self._submit("query", [text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of several queries, in one engine call with any other queued queries."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._submit("query", list(texts))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of stored passages (batched with concurrent passages)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._submit("passage", list(texts))

    # -- the worker ------------------------------------------------------------------------

    def _submit(self, kind: str, texts: list[str]) -> np.ndarray:
        if threading.current_thread() is self._thread:  # called from inside a batch: no queue
            return self._run(kind, texts)
        self._ensure_thread()
        futures = []
        for start in range(0, len(texts), PASSAGE_SLICE):  # a query never waits for all of them
            future: Future = Future()
            self._queue.put((kind, texts[start : start + PASSAGE_SLICE], future))
            futures.append(future)
        parts = [f.result() for f in futures]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._start:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="elora-embedder", daemon=True
                )
                self._thread.start()

    def _take(self, block: bool) -> tuple[list, bool]:
        """Everything queued now (waiting for a first job when `block`); and whether to stop."""
        jobs, stop = [], False
        if block:
            first = self._queue.get()
            if first is None:
                return jobs, True
            jobs.append(first)
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                return jobs, stop
            if job is None:
                stop = True
            else:
                jobs.append(job)

    def _loop(self) -> None:
        # Queries are on a request's path; passages (new chunks, entries) are background work.
        # Each turn serves every waiting query first, then one slice of passages.
        passages: deque = deque()
        stop = False
        while True:
            jobs, stopping = self._take(block=not passages and not stop)
            stop = stop or stopping
            passages.extend(j for j in jobs if j[0] == "passage")
            self._batch([j for j in jobs if j[0] == "query"], "query")
            if passages:
                group, size = [], 0
                while passages and (not group or size + len(passages[0][1]) <= PASSAGE_SLICE):
                    job = passages.popleft()
                    group.append(job)
                    size += len(job[1])
                self._batch(group, "passage")
            elif stop:
                return

    def _batch(self, jobs: list[tuple[str, list[str], Future]], kind: str) -> None:
        """Embed the texts of several jobs in as few engine calls as possible."""
        while jobs:
            group, size = [], 0
            while jobs and (not group or size + len(jobs[0][1]) <= MAX_BATCH):
                job = jobs.pop(0)
                group.append(job)
                size += len(job[1])
            texts = [t for _, job_texts, _ in group for t in job_texts]
            try:
                vectors = self._run(kind, texts)
            except BaseException as exc:  # each caller gets the embedder's own error
                for _, _, future in group:
                    future.set_exception(exc)
                continue
            start = 0
            for _, job_texts, future in group:
                future.set_result(vectors[start : start + len(job_texts)])
                start += len(job_texts)

    def _run(self, kind: str, texts: list[str]) -> np.ndarray:
        inner = self.inner
        if kind == "passage":
            return np.asarray(inner.embed_passages(texts), dtype=np.float32)
        many = getattr(inner, "embed_queries", None)
        if many is not None:
            return np.asarray(many(texts), dtype=np.float32)
        return np.stack([np.asarray(inner.embed_query(t), dtype=np.float32) for t in texts])

    def close(self) -> None:
        """Stop the thread once the queued work is done (it restarts if used again)."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=30)
        self._thread = None
        if not self._queue.empty():  # a caller slipped in while it stopped: serve it
            self._ensure_thread()
