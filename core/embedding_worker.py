"""The embedder's threads: every caller's texts are queued, and what queued up together is
embedded in one batch: queries with queries on one thread, passages with passages on another.

A batch of 16 texts costs much less than 16 single calls, so when many chats are served at
once their questions meet here and share batches, and so do the archive's new messages. The
two kinds have a thread each because they are on different clocks: a question is on a reply's
path and short (one core, a few milliseconds), new passages are background work in batches that
take a while. Behind one queue, a question waited for the passage batch under way (40-70 ms a
question under load, all of it with its request's work slot held); with a lane of its own it
waits for nothing but itself. The engine keeps no state between calls (core/native/e5.c
allocates each call's buffers), so the two lanes may run it at the same time.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Texts per engine call when several callers' texts are merged (one caller's are never split).
MAX_BATCH = 128
KINDS = ("query", "passage")


class EmbeddingWorker:
    """An Embedder that hands its work to two background threads (queries, passages), each
    batching the concurrent calls of its kind.

    It exposes the wrapped embedder's name, dim, calibrate and any other attribute unchanged,
    so it can stand wherever the embedder did."""

    def __init__(self, embedder: Any):
        self.inner = embedder
        self._queues: dict[str, queue.SimpleQueue[tuple[list[str], Future] | None]] = {
            kind: queue.SimpleQueue() for kind in KINDS
        }
        self._threads: dict[str, threading.Thread] = {}
        self._start = threading.Lock()
        self._lane = threading.local()  # `.kind` set on the lanes' own threads

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

    # -- the lanes ---------------------------------------------------------------------------

    def queued(self, kind: str) -> int:
        """Calls of this kind waiting for their lane (read by tests)."""
        return self._queues[kind].qsize()

    def _submit(self, kind: str, texts: list[str]) -> np.ndarray:
        if getattr(self._lane, "kind", None):  # called from inside a batch: no queue
            return self._run(kind, texts)
        self._ensure_thread(kind)
        future: Future = Future()
        self._queues[kind].put((texts, future))
        return future.result()

    def _ensure_thread(self, kind: str) -> None:
        thread = self._threads.get(kind)
        if thread is not None and thread.is_alive():
            return
        with self._start:
            thread = self._threads.get(kind)
            if thread is None or not thread.is_alive():
                name = "elora-embedder" if kind == "passage" else f"elora-embedder-{kind}"
                thread = threading.Thread(target=self._loop, args=(kind,), name=name, daemon=True)
                self._threads[kind] = thread
                thread.start()

    def _take(self, kind: str) -> tuple[list, bool]:
        """Everything queued for a lane now (waiting for a first call); and whether to stop."""
        lane = self._queues[kind]
        first = lane.get()
        if first is None:
            return [], True
        jobs, stop = [first], False
        while True:
            try:
                job = lane.get_nowait()
            except queue.Empty:
                return jobs, stop
            if job is None:
                stop = True
            else:
                jobs.append(job)

    def _loop(self, kind: str) -> None:
        self._lane.kind = kind
        while True:
            jobs, stop = self._take(kind)
            self._batch(jobs, kind)
            if stop:
                return

    def _batch(self, jobs: list[tuple[list[str], Future]], kind: str) -> None:
        """Embed the texts of several jobs in as few engine calls as possible."""
        while jobs:
            group, size = [], 0
            while jobs and (not group or size + len(jobs[0][0]) <= MAX_BATCH):
                job = jobs.pop(0)
                group.append(job)
                size += len(job[0])
            texts = [t for job_texts, _ in group for t in job_texts]
            try:
                vectors = self._run(kind, texts)
            except BaseException as exc:  # each caller gets the embedder's own error
                for _, future in group:
                    future.set_exception(exc)
                continue
            start = 0
            for job_texts, future in group:
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
        """Stop the threads once the queued work is done (they restart if used again)."""
        for kind, thread in list(self._threads.items()):
            if thread.is_alive():
                self._queues[kind].put(None)
                thread.join(timeout=30)
        self._threads.clear()
        for kind, lane in self._queues.items():
            if not lane.empty():  # a caller slipped in while it stopped: serve it
                self._ensure_thread(kind)
