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


def test_the_archive_vocabulary_counts_messages_per_word_as_they_come_and_go(services):
    """Word rarity (recall's Vocabulary): fts5vocab on SQLite, a trigger's table on
    PostgreSQL; folded like the index, a prefix counted over its words."""
    from core.memory.forget import forget_matching
    from core.recall.vocabulary import Vocabulary

    _capture(services, "Le déménagement à Lyon, quel déménagement !", "1")
    _capture(services, "Déménager encore ? Lyon me plaît", "2")
    _capture(services, "Rien à voir", "3")

    def documents(*terms: tuple[str, bool]) -> dict:
        vocabulary = Vocabulary(services)
        vocabulary._lookup(list(terms))
        return {term: vocabulary.documents[term] for term in terms}

    counts = documents(
        ("lyon", False), ("demenagement", False), ("demenag", True), ("camille", False)
    )
    # Once per message however often it says it; the sender's name is a word of each message.
    assert counts == {
        ("lyon", False): 2, ("demenagement", False): 1, ("demenag", True): 2,
        ("camille", False): 3,
    }  # fmt: skip

    forget_matching(services, "Lyon me plaît")

    after = documents(("lyon", False), ("demenag", True), ("camille", False), ("voir", False))
    assert after == {("lyon", False): 1, ("demenag", True): 1, ("camille", False): 2,
                     ("voir", False): 1}  # fmt: skip
