"""The background indexer embeds the new chunks of every chat together, after the replies; the
embedding worker batches concurrent queries into one engine call with the same vectors."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import numpy as np

from core.archive.records import CaptureIn
from core.embedding_worker import EmbeddingWorker
from core.services import Services
from tests.fakes import HashEmbedder


class GatedEmbedder(HashEmbedder):
    """Records each passage batch; the first one waits at a gate until the test opens it."""

    def __init__(self):
        super().__init__()
        self.batches: list[int] = []
        self.query_batches: list[int] = []
        self.inside = threading.Event()
        self.gate = threading.Event()

    def embed_passages(self, texts):
        self.batches.append(len(texts))
        self.inside.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return super().embed_passages(texts)

    def embed_queries(self, texts):
        self.query_batches.append(len(texts))
        self.inside.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return np.stack([self.embed_query(t) for t in texts])


def capture(services, chat: str, text: str) -> list[str]:
    """Archive one message without indexing it; return its chunk ids."""
    item = CaptureIn(surface="telegram", chat_id=chat, text=text, sent_at=datetime(2025, 5, 1))
    return list(services.archive.capture(item, index=False).chunk_ids)


def test_chunks_of_several_chats_wait_together_and_share_one_round(settings):
    embedder = GatedEmbedder()
    services = Services(settings, embedder=embedder)
    indexer = services.archive.indexer
    first = capture(services, "1", "Le train part à 8 h de Lyon")

    indexer.submit(first)
    assert embedder.inside.wait(30)  # the first round is being embedded, held at the gate
    later = [capture(services, str(chat), f"Message du chat {chat}") for chat in (2, 3, 4)]
    for chunk_ids in later:
        indexer.submit(chunk_ids)
    embedder.gate.set()
    assert indexer.wait_idle(60)

    assert embedder.batches == [1, 3]  # three chats' chunks in the second round, together
    assert services.archive.counts()["chunks_pending_vectors"] == 0
    assert services.vectors.count("archive") == 4
    services.close()


def test_closing_finishes_the_round_under_way_and_leaves_the_rest_pending(settings):
    embedder = GatedEmbedder()
    services = Services(settings, embedder=embedder)
    indexer = services.archive.indexer
    indexer.submit(capture(services, "1", "Le train part à 8 h de Lyon"))
    assert embedder.inside.wait(30)  # a round is being embedded, held at the gate
    indexer.submit(capture(services, "2", "Le vol part à 10 h de Nantes"))

    assert indexer.close(timeout=0) is False  # closed, but the round under way goes on
    embedder.gate.set()
    assert indexer.close(timeout=60) is True

    assert embedder.batches == [1]  # no round started after close
    assert services.archive.counts()["chunks_pending_vectors"] == 1  # left for the index job
    indexer.submit(capture(services, "3", "Le bus part à midi"))  # queued, never embedded here
    assert indexer.pending() == 2 and embedder.batches == [1]
    services.close()


def test_concurrent_queries_are_embedded_in_one_batch_with_the_same_vectors():
    inner = GatedEmbedder()
    worker = EmbeddingWorker(inner)
    texts = [f"question numéro {n}" for n in range(5)]
    results: dict[str, np.ndarray] = {}

    def ask(text: str) -> None:
        results[text] = worker.embed_query(text)

    holder = threading.Thread(target=ask, args=("la première",))
    holder.start()
    assert inner.inside.wait(30)  # the worker is busy with the first query
    others = [threading.Thread(target=ask, args=(t,)) for t in texts]
    for thread in others:
        thread.start()
    deadline = time.monotonic() + 30
    while worker.queued("query") < len(texts):  # the five callers queue behind the first
        assert time.monotonic() < deadline, "the callers never queued"
        time.sleep(0.01)
    inner.gate.set()
    for thread in [holder, *others]:
        thread.join(30)
    worker.close()

    assert inner.query_batches == [1, 5]
    for text in texts:
        assert np.array_equal(results[text], inner.embed_query(text))


def test_a_question_is_embedded_while_a_passage_batch_is_under_way():
    # Questions have a lane of their own: one never waits for the archive's new passages.
    class SlowPassages(HashEmbedder):
        def __init__(self):
            super().__init__()
            self.inside = threading.Event()
            self.gate = threading.Event()

        def embed_passages(self, texts):
            self.inside.set()
            assert self.gate.wait(30), "the test never opened the gate"
            return super().embed_passages(texts)

    inner = SlowPassages()
    worker = EmbeddingWorker(inner)
    stored: list[np.ndarray] = []
    background = threading.Thread(
        target=lambda: stored.append(worker.embed_passages(["Le train part à 8 h"]))
    )
    background.start()
    assert inner.inside.wait(30)  # the passage batch is held in the engine

    vector = worker.embed_query("à quelle heure part le train ?")  # returns meanwhile

    assert np.array_equal(vector, inner.embed_query("à quelle heure part le train ?"))
    assert not stored  # the passages are still inside their batch
    inner.gate.set()
    background.join(30)
    worker.close()
    assert np.array_equal(stored[0], inner.embed_passages(["Le train part à 8 h"]))
