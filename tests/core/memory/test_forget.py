from datetime import datetime, timedelta

import pytest
from sqlalchemy import text

from core.errors import NotFound
from core.ids import memory_uuid
from core.memory.api import forget_memory, save_memory, search_memory
from core.recall.archive_search import search_archive
from core.recall.pack import build_pack
from tests.core.memory.helpers import entry, files_containing, fts_terms, message, source_of
from tests.databases import texts

SECRET_TEXT = "Mon code de casier est 4711-ZEBRA"
SECRET_TOKEN = "4711-ZEBRA"
QUESTION = "Quel est mon code de casier ?"


def _rows(services, sql: str, **params):
    with services.db.session() as session:
        return session.exec(text(sql), params=params).all()


def _recall_paths(services, memory_id: str) -> dict[str, bool]:
    """Whether each recall path still reaches the entry."""
    uuid = memory_uuid(memory_id)
    in_pack = build_pack(services, QUESTION).item_ids()
    return {
        "search_memory": memory_id in [h["memory_id"] for h in search_memory(services, QUESTION)],
        "fts": bool(texts(services, "entries", "zebra")),
        "vector": bool(services.vectors.get_vectors("memory", [uuid])),
        "pack": memory_id in in_pack,
        "listing": memory_id in [e.memory_id for e in services.memory.list(status=None)],
        "topics": memory_id in [t["memory_id"] for t in services.memory.topics(None)],
    }


def test_forgotten_entry_is_unreachable_by_every_recall_path(services):
    save_memory(services, entry("fact.locker", SECRET_TEXT, topics=["casier", "sport"]))
    save_memory(services, entry("fact.gym", "La salle de sport ouvre à 6h", topics=["sport"]))
    assert all(_recall_paths(services, "fact.locker").values())

    forget_memory(services, "fact.locker")

    assert _recall_paths(services, "fact.locker") == dict.fromkeys(
        ("search_memory", "fts", "vector", "pack", "listing", "topics"), False
    )
    assert services.memory.get("fact.gym") is not None  # only the one entry went
    with pytest.raises(NotFound):
        forget_memory(services, "fact.locker")


def test_forgetting_leaves_no_copy_of_the_text_in_any_file_of_the_home(services, home):
    # Earlier versions of the entry, many neighbours and a recall all touch the files first.
    for n in range(25):
        save_memory(services, entry(f"fact.garden-{n}", f"Tomates cerises, rang {n}, arrosage"))
    save_memory(services, entry("fact.locker", "Mon code de casier est 1066-OKAPI"))
    save_memory(services, entry("fact.locker", SECRET_TEXT, topics=["casier"]))
    build_pack(services, QUESTION)
    assert files_containing(home, SECRET_TOKEN)  # the byte search does find text on disk
    assert fts_terms(home / "elora.db", {"zebra"}) == {"zebra"}

    forget_memory(services, "fact.locker")

    for needle in (SECRET_TEXT, SECRET_TOKEN, "ZEBRA", "1066-OKAPI", "OKAPI"):
        assert files_containing(home, needle) == [], needle
    assert not fts_terms(home / "elora.db", {"zebra", "okapi", "4711", "1066"})
    assert files_containing(home, "Tomates cerises")  # the rest of memory is intact


def test_forget_log_records_the_id_and_time_but_not_the_content(services, clock):
    save_memory(services, entry("fact.locker", SECRET_TEXT))

    report = forget_memory(services, "fact.locker")

    rows = _rows(services, "SELECT * FROM forget_log")
    assert len(rows) == 1
    row = rows[0]._mapping
    assert row["entry_uuid"] == memory_uuid("fact.locker")  # the uuid: a slug may carry words
    assert str(row["forgotten_at"]).startswith(clock.now().strftime("%Y-%m-%d %H:%M"))
    assert not row["with_sources"]
    assert all("zebra" not in str(value).lower() for value in row.values())
    assert report.memory_id == "fact.locker" and report.removed_captures == 0


@pytest.fixture
def chat_with_a_secret(services):
    """A short exchange archived as one window chunk; message 101 holds the secret."""
    start = datetime(2024, 5, 2, 18, 0)
    said = [
        message("100", "Tu peux noter un truc pour la salle de sport ?", start),
        message("101", SECRET_TEXT, start + timedelta(minutes=1)),
        message(
            "102",
            "C'est noté.",
            start + timedelta(minutes=2),
            sender="Elora",
            role="assistant",
        ),
        message("103", "Et le vélo est au sous-sol, place B12.", start + timedelta(minutes=3)),
    ]
    elsewhere = message("7", "Le cadenas du vélo : 5820-LYNX", start, chat_id="99")
    services.archive.store_batch([*said, elsewhere])
    services.archive.index_pending()
    return said, elsewhere


def _window(services):
    rows = _rows(
        services,
        "SELECT text, message_ids, vector_state FROM chunks WHERE chat_id = '42' AND kind = 'window'",
    )
    assert len(rows) == 1
    return rows[0]


def test_forget_with_sources_erases_the_source_message_everywhere(
    services, home, chat_with_a_secret
):
    said, _ = chat_with_a_secret
    assert "101" in _window(services).message_ids
    save_memory(
        services,
        entry(
            "fact.locker",
            "Casier de la salle de sport : 4711-ZEBRA",
            topics=["casier"],
            sources=[source_of(said[1])],
        ),
    )

    report = forget_memory(services, "fact.locker", with_sources=True)

    assert (report.removed_captures, report.rewritten_chunks) == (1, 1)
    for needle in (SECRET_TEXT, SECRET_TOKEN, "ZEBRA", "Mon code de casier"):
        assert files_containing(home, needle) == [], needle
    assert not fts_terms(home / "elora.db", {"zebra", "4711"})
    window = _window(services)
    assert "101" not in window.message_ids
    assert "zebra" not in window.text.lower()
    assert window.vector_state == "indexed"  # re-embedded without the erased message
    assert [c for (c,) in _rows(services, "SELECT message_id FROM captures ORDER BY rowid")] == [
        "100",
        "102",
        "103",
        "7",
    ]
    found = search_archive(services, "code casier 4711-ZEBRA", None, limit=10)
    assert all("zebra" not in hit.text.lower() for hit in found)
    log = _rows(services, "SELECT with_sources, removed_captures FROM forget_log")
    assert [tuple(r) for r in log] == [(1, 1)]


def test_forget_with_sources_keeps_messages_that_were_not_sources(
    services, home, chat_with_a_secret
):
    said, _ = chat_with_a_secret
    save_memory(
        services,
        entry("fact.locker", "Casier : 4711-ZEBRA", sources=[source_of(said[1])]),
    )

    forget_memory(services, "fact.locker", with_sources=True)

    for kept in ("place B12", "5820-LYNX", "noter un truc pour la salle de sport"):
        assert files_containing(home, kept), kept
    hits = search_archive(services, "où est garé le vélo au sous-sol ?", None, limit=5)
    assert any("place B12" in hit.text for hit in hits)
    window_hit = next(hit for hit in hits if "place B12" in hit.text)
    assert window_hit.message_ids == ["100", "102", "103"]


def test_forget_without_sources_keeps_the_archived_messages(services, home, chat_with_a_secret):
    said, _ = chat_with_a_secret
    save_memory(
        services,
        entry(
            "fact.bike-spot",
            "Le vélo est rangé place B12 (code 3141-IBIS)",
            sources=[source_of(said[3])],
        ),
    )
    assert files_containing(home, "3141-IBIS")

    report = forget_memory(services, "fact.bike-spot")

    assert report.removed_captures == 0
    assert files_containing(home, "3141-IBIS") == []
    assert files_containing(home, "IBIS") == []
    assert not fts_terms(home / "elora.db", {"ibis"})
    assert files_containing(home, "Et le vélo est au sous-sol, place B12.")
    assert "101" in _window(services).message_ids  # nothing of the archive was touched


def test_forget_with_sources_drops_a_chunk_that_only_held_the_source(services, home):
    lone = message("55", "Le code de l'alarme est 2580-HERON", datetime(2024, 3, 1, 8, 0))
    services.archive.capture(lone)
    assert services.vectors.count("archive") == 1
    save_memory(services, entry("fact.alarm", "Alarme : 2580-HERON", sources=[source_of(lone)]))

    report = forget_memory(services, "fact.alarm", with_sources=True)

    assert report.removed_chunks == 1
    assert services.archive.counts()["chunks"] == 0
    assert services.vectors.count("archive") == 0
    assert files_containing(home, "HERON") == []
