from datetime import datetime

from core.archive.records import CaptureIn


def _search(services, table: str, words: str) -> list[str]:
    with services.db.session() as session:
        return list(
            session.connection()
            .exec_driver_sql(
                f"SELECT t.text FROM {table}_fts JOIN {table} t ON t.rowid = {table}_fts.rowid "
                f"WHERE {table}_fts MATCH ?",
                (words,),
            )
            .scalars()
        )


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

    assert _search(services, "captures", "demenage") == ["Je déménage à Lyon en mai"]
    assert _search(services, "captures", "déménage") == ["Je déménage à Lyon en mai"]


def test_chunks_are_searchable_by_word_too(services):
    _capture(services, "Le vétérinaire a dit que le chat va bien", "1")

    hits = _search(services, "chunks", "veterinaire")

    assert len(hits) == 1
    assert "Le vétérinaire a dit" in hits[0]


def test_sender_name_is_searchable(services):
    _capture(services, "Rendez-vous à midi", "1")

    assert _search(services, "captures", "sender:camille") == ["Rendez-vous à midi"]
