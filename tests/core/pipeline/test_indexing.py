"""After a reply, only the exchange's own chunks are embedded, never the archive's backlog."""

from datetime import timedelta

from core.archive.records import CaptureIn
from core.storage.db import run
from tests.core.routing.support import NOW, ask


def vector_states(services) -> dict[str, str]:
    """Each capture's text → the vector state of its chunk."""
    sql = (
        "SELECT c.text, k.vector_state FROM chunks k "
        "JOIN chunk_captures cc ON cc.chunk_rowid = k.rowid "
        "JOIN captures c ON c.rowid = cc.capture_rowid"
    )
    with services.db.session() as session:
        return dict(run(session.connection(), sql).all())


async def test_a_message_indexes_its_own_chunks_not_the_pending_backlog(services, llm):
    backlog = "Old note, waiting for the index-pending job after an embedder change."
    services.archive.capture(
        CaptureIn(surface="telegram", chat_id="42", text=backlog, sent_at=NOW - timedelta(days=3)),
        index=False,
    )
    llm.enqueue("fake-lite", "Paris.")

    reply = await ask(services, "What is the capital of France?")
    await services.assistant.drain()

    assert reply.status == "answered"
    assert vector_states(services) == {
        backlog: "pending",
        "What is the capital of France?": "indexed",
        "Paris.": "indexed",
    }
