import asyncio
from datetime import datetime

import pytest

from core.archive.records import CaptureIn
from core.jobs.registry import run_job
from core.services import Services
from core.storage.db import run
from tests.fakes import BrokenEmbedder

pytestmark = pytest.mark.chroma_server


def _vector_states(services) -> list[str]:
    with services.db.session() as session:
        sql = "SELECT vector_state FROM chunks ORDER BY rowid"
        return list(run(session.connection(), sql).scalars())


def test_capture_is_archived_when_embedder_fails_and_indexed_later(settings, embedder):
    broken = Services(settings, embedder=BrokenEmbedder())
    item = CaptureIn(
        surface="telegram",
        chat_id="42",
        text="Je déménage à Lyon en mai",
        sent_at=datetime(2024, 5, 1),
    )

    result = broken.archive.capture(item)

    assert broken.embedder.calls >= 1  # the failure really happened
    assert result.status == "stored"
    assert not result.indexed
    assert _vector_states(broken) == ["pending"]
    assert broken.archive.counts()["chunks_pending_vectors"] == 1
    broken.close()

    working = Services(settings, embedder=embedder)
    assert working.archive.index_pending() == 1

    assert _vector_states(working) == ["indexed"]
    hits = working.vectorspace.query("archive", "where am I moving to?", 3)
    assert len(hits) == 1 and hits[0].metadata["chat_id"] == "42"
    working.close()


def test_index_pending_job_indexes_what_the_failing_embedder_left(settings, embedder):
    broken = Services(settings, embedder=BrokenEmbedder())
    for n in range(3):
        broken.archive.capture(
            CaptureIn(surface="cli", chat_id="1", text=f"note {n}", sent_at=datetime(2024, 5, 1))
        )
    broken.close()

    working = Services(settings, embedder=embedder)
    outcome = asyncio.run(run_job(working, "index-pending"))

    assert outcome["chunks"] == 3
    assert _vector_states(working) == ["indexed"] * 3
    assert working.vectors.count("archive") == 3
    working.close()
