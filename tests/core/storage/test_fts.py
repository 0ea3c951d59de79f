"""The archive's full-text index: accents folded, chunks and senders searchable (FTS5 on
SQLite, tsvector on PostgreSQL)."""

from datetime import datetime

from core.archive.records import CaptureIn
from tests.databases import texts


def _capture(services, text: str, message_id: str) -> None:
    services.archive.capture(
        CaptureIn(
            surface="telegram",
            chat_id="42",
            message_id=message_id,
            sender="Camille",
            text=text,
            sent_at=datetime(2024, 5, 1, 9, 0),
        ),
        index=False,
    )


def test_word_without_accents_finds_accented_capture(services):
    _capture(services, "Je déménage à Lyon en mai", "1")
    _capture(services, "On se voit jeudi pour le café", "2")

    assert texts(services, "captures", "demenage") == ["Je déménage à Lyon en mai"]
    assert texts(services, "captures", "déménage") == ["Je déménage à Lyon en mai"]


def test_chunks_are_searchable_by_word_too(services):
    _capture(services, "Le vétérinaire a dit que le chat va bien", "1")

    hits = texts(services, "chunks", "veterinaire")

    assert len(hits) == 1
    assert "Le vétérinaire a dit" in hits[0]


def test_sender_name_is_searchable(services):
    _capture(services, "Rendez-vous à midi", "1")
    _capture(services, "Camille a dit bonjour", "2")

    assert texts(services, "captures", "camille") == ["Camille a dit bonjour", "Rendez-vous à midi"]


def test_rarer_words_rank_higher_like_bm25(services):
    for n in range(6):
        _capture(services, f"Réunion budget numéro {n}", str(n))
    _capture(services, "Réunion avec le notaire pour la maison", "9")

    ranked = texts(services, "captures", "reunion", "notaire")

    assert ranked[0] == "Réunion avec le notaire pour la maison"
    assert len(ranked) == 7
