from datetime import datetime, timedelta, timezone

import pytest
from sqlmodel import select

from core.archive.records import MAX_CAPTURE_CHARS, CaptureIn
from core.config import load_settings
from core.errors import InvalidInput
from core.services import Services
from core.storage.models import Capture, Chunk, ChunkCapture

pytestmark = pytest.mark.chroma_server

PARIS_SUMMER = timezone(timedelta(hours=2))


def _message(text: str, message_id="1", chat_id="42", surface="telegram", **extra) -> CaptureIn:
    return CaptureIn(
        surface=surface,
        chat_id=chat_id,
        message_id=message_id,
        text=text,
        sent_at=extra.pop("sent_at", datetime(2024, 5, 1, 9, 0)),
        **extra,
    )


def _captures(services) -> list[Capture]:
    with services.db.session() as session:
        rows = list(session.exec(select(Capture).order_by(Capture.rowid)))
        session.expunge_all()  # keep the loaded values readable after the commit
        return rows


def _chunks_of(services, capture_id: str) -> list[Chunk]:
    with services.db.session() as session:
        statement = (
            select(Chunk)
            .join(ChunkCapture, ChunkCapture.chunk_rowid == Chunk.rowid)
            .join(Capture, Capture.rowid == ChunkCapture.capture_rowid)
            .where(Capture.id == capture_id)
            .order_by(Chunk.part)
        )
        rows = list(session.exec(statement))
        session.expunge_all()
        return rows


def test_capture_keeps_the_message_verbatim_with_its_origin(services):
    text = "  Je déménage à Lyon\n  en mai 🙂  "
    item = CaptureIn(
        surface="telegram",
        chat_id=-100123,
        user_id=777,
        message_id=55,
        sender="Camille",
        text=text,
        sent_at=datetime(2024, 5, 1, 14, 30, tzinfo=PARIS_SUMMER),
        provenance={"update_id": 9001, "via": "bot"},
    )

    result = services.archive.capture(item)

    assert result.status == "stored" and result.durable
    [row] = _captures(services)
    assert row.id == result.id == item.id
    assert (row.surface, row.user_id, row.chat_id, row.message_id) == (
        "telegram",
        "777",
        "-100123",
        "55",
    )
    assert row.sender == "Camille"
    assert row.text == text
    assert row.sent_at == datetime(2024, 5, 1, 12, 30)  # stored in UTC
    assert row.provenance == {"update_id": 9001, "via": "bot"}


def test_stored_capture_is_found_by_meaning(services):
    services.archive.capture(_message("Je déménage à Lyon en mai", message_id="1"))
    services.archive.capture(_message("La facture d'électricité est arrivée", message_id="2"))

    hits = services.vectorspace.query("archive", "where am I moving to?", 1)

    [chunk] = _chunks_of(services, _captures(services)[0].id)
    assert [h.id for h in hits] == [chunk.id]


def test_same_message_captured_twice_is_a_duplicate_stored_once(services):
    first = services.archive.capture(_message("Bonjour", message_id="7"))
    again = services.archive.capture(_message("Bonjour", message_id="7"))

    assert first.status == "stored"
    assert again.status == "duplicate"
    assert len(_captures(services)) == 1
    assert services.archive.counts()["chunks"] == 1


def test_same_message_id_in_another_chat_or_surface_is_not_a_duplicate(services):
    results = [
        services.archive.capture(_message("Bonjour", message_id="7", chat_id="42")),
        services.archive.capture(_message("Bonjour", message_id="7", chat_id="43")),
        services.archive.capture(_message("Bonjour", message_id="7", surface="cli")),
    ]

    assert [r.status for r in results] == ["stored"] * 3
    assert len(_captures(services)) == 3


def test_long_text_is_cut_into_parts_while_capture_keeps_full_text(home, embedder, monkeypatch):
    monkeypatch.setenv("ELORA_CHUNK_CHARS", "300")
    monkeypatch.setenv("ELORA_CHUNK_OVERLAP_CHARS", "60")
    services = Services(load_settings(), embedder=embedder)
    sentences = [f"Le carton numéro {n} part dans le camion demain matin." for n in range(40)]
    text = "\n\n".join(" ".join(sentences[i : i + 5]) for i in range(0, 40, 5))
    assert len(text) > 6 * 300

    result = services.archive.capture(_message(text))

    [row] = _captures(services)
    assert row.text == text
    parts = _chunks_of(services, result.id)
    assert len(parts) >= 6
    assert [p.part for p in parts] == list(range(len(parts)))
    assert {p.kind for p in parts} == {"part"}
    assert all(len(p.text) <= 300 for p in parts)
    covered = 0  # each part continues where the previous one stopped: nothing falls between
    for part in parts:
        start = text.index(part.text)
        assert text[covered:start].strip() == ""
        covered = start + len(part.text)
    assert text[covered:].strip() == ""
    assert result.indexed
    assert services.vectors.count("archive") == len(parts)
    services.close()


def test_input_over_the_limit_is_refused_and_nothing_is_stored(services):
    huge = _message("x" * (MAX_CAPTURE_CHARS + 1))

    with pytest.raises(InvalidInput, match="limit"):
        services.archive.capture(huge)

    assert services.archive.counts()["captures"] == 0
    assert services.spool.backlog() == 0
