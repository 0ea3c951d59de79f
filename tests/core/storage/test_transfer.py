"""`elora migrate-store`: a populated SQLite home moves to another database, every table and
row verified, and the moved home answers from the same memory (vectors reused or rebuilt).

The move to PostgreSQL runs when a test server is configured (ELORA_TEST_DATABASE_URL); the
same copy into a second SQLite file runs in every suite."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from sqlalchemy import inspect

from core.archive.records import CaptureIn
from core.cli.main import main
from core.config import load_settings
from core.memory.tombstones import bury
from core.pipeline import Request
from core.services import Services
from core.storage.db import Database, run
from tests.core.memory.helpers import entry

TABLES_WITH_ROWS = {
    "captures", "chunks", "chunk_captures", "memory_entries", "entry_links", "proposals",
    "traces", "threads", "capability_profile", "session_chunks", "forget_log", "meta",
    "tombstones", "surface_messages", "chat_settings", "learned_captures", "updates",
}  # fmt: skip


@pytest.fixture
def sqlite_home(home, llm, monkeypatch, embedder):
    """A home on SQLite whatever the suite's database, filled through the real code paths."""
    monkeypatch.delenv("ELORA_DATABASE_URL", raising=False)
    svc = Services(load_settings(), embedder=embedder)
    assert svc.db.dialect == "sqlite"
    _populate(svc, llm)
    yield svc
    svc.close()


def _populate(svc: Services, llm) -> None:
    start = datetime(2024, 5, 1, 9, 0)
    lines = [
        ("Camille", "Je déménage à Lyon le 15 mai, le camion est réservé pour 8h"),
        ("Léa", "Tu veux de l'aide pour les cartons ?"),
        ("Camille", "Oui, samedi matin si tu peux"),
        ("Léa", "Le vétérinaire a dit que le chat va bien"),
    ]
    svc.archive.store_batch(
        [
            CaptureIn(surface="telegram", chat_id="42", message_id=str(n), sender=who, text=body,
                      sent_at=start + timedelta(minutes=n), user_id="7" if who == "Léa" else "8")
            for n, (who, body) in enumerate(lines)
        ]
    )  # fmt: skip
    svc.archive.index_pending()
    move = svc.memory.save(entry("event.move-lyon", "Camille moves to Lyon on 15 May"))
    truck = svc.memory.save(entry("fact.truck", "The moving truck is booked for 8am"))
    svc.memory.link(truck.uuid, move.uuid, "supports", note="same move")
    svc.memory.index()
    svc.proposals.create(text="Léa helps with the boxes", kind="fact", tier="semantic",
                         candidate={"text": "Léa helps with the boxes"})  # fmt: skip
    llm.answer_when("Quand est-ce que je déménage", "Le 15 mai, à Lyon.")
    import asyncio

    reply = asyncio.run(
        svc.assistant.handle(
            Request(surface="telegram", chat_id="42", text="Quand est-ce que je déménage ?",
                    user_id="8", message_id="99", sender="Camille")
        )
    )  # fmt: skip
    asyncio.run(svc.assistant.drain())
    assert reply.status == "answered" and reply.trace_id
    svc.chats.remember_reply("telegram", "42", "5001", reply.trace_id)
    svc.chats.set_private("telegram", "43", True)
    svc.session_memory.save("8", "42", "doc:plan", "Plan du déménagement : cartons samedi")
    svc.profile.record("recall", "up")
    bury(svc, ["Une phrase oubliée pour toujours"])
    svc.db.execute(
        "INSERT INTO forget_log (entry_uuid, with_sources, removed_captures, forgotten_at) "
        "VALUES ('', 0, 1, ?)",
        (datetime(2024, 5, 2),),
    )
    svc.db.execute(
        "INSERT INTO learned_captures (capture_id, learned_at) VALUES ('c-learned', ?)",
        (datetime(2024, 5, 2),),
    )
    from core.workers.updates import UpdateQueue

    UpdateQueue(svc).receive(1001, "42", {"update_id": 1001, "message": {"text": "hi"}})


def _rows(db: Database, table: str) -> list[tuple]:
    """Every row of a table, as comparable text, in a stable order."""
    with db.engine.connect() as conn:
        columns = [c["name"] for c in inspect(conn).get_columns(table) if c["name"] != "search"]
        quoted = ", ".join(f'"{c}"' for c in columns)  # turn_dates has an "end"
        rows = run(conn, f"SELECT {quoted} FROM {table}").all()
    return sorted(tuple(_plain(v) for v in row) for row in rows)


def _plain(value):
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return round(value, 9)
    return value


def _migrate(target: str, capsys, *extra: str) -> dict:
    assert main(["migrate-store", "--to", target, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _check_copy(source: Services, target_url: str, report: dict) -> None:
    assert report["verified"] is True
    assert {t for t, n in report["tables"].items() if n["source"]} >= TABLES_WITH_ROWS
    target = Database(target_url)
    try:
        for table, counts in report["tables"].items():
            assert counts["source"] == counts["target"], table
            assert _rows(target, table) == _rows(source.db, table), table
    finally:
        target.close()


def _moved_home_answers(monkeypatch, embedder, target_url: str) -> None:
    """The moved home finds the old messages by word and by meaning, and keeps writing."""
    monkeypatch.setenv("ELORA_DATABASE_URL", target_url)
    moved = Services(load_settings(), embedder=embedder)
    try:
        from core.recall.archive_search import search_archive

        by_word = search_archive(moved, "vétérinaire", None, limit=3, mode="lexical")
        assert any("vétérinaire" in hit.text for hit in by_word)
        question = "Qui aide à porter les cartons ?"
        vector = moved.embedder.embed_query(question)
        by_meaning = search_archive(moved, question, vector, limit=3, mode="vector")
        assert any("cartons" in hit.text for hit in by_meaning)
        result = moved.archive.capture(
            CaptureIn(surface="telegram", chat_id="42", message_id="100", sender="Camille",
                      text="Le camion est arrivé", sent_at=datetime(2024, 5, 15, 8, 5))
        )  # fmt: skip
        assert result.status == "stored"  # new ids start after the copied ones
        new_entry = moved.memory.save(entry("fact.keys", "The keys are with the concierge"))
        copied = moved.db.rows("SELECT max(rowid) FROM memory_entries WHERE memory_id != ?",
                               ("fact.keys",))  # fmt: skip
        assert new_entry.rowid > copied[0][0]
    finally:
        moved.close()


def test_a_populated_home_moves_to_another_sqlite_file(
    sqlite_home, tmp_path, capsys, monkeypatch, embedder
):
    target = f"sqlite:///{tmp_path / 'moved' / 'elora.db'}"

    report = _migrate(target, capsys)

    _check_copy(sqlite_home, target, report)
    assert report["vectors"] == "reused"
    _moved_home_answers(monkeypatch, embedder, target)


@pytest.mark.postgres
def test_a_populated_home_moves_to_postgresql_and_answers_there(
    sqlite_home, pg_url, capsys, monkeypatch, embedder
):
    report = _migrate(pg_url, capsys)

    _check_copy(sqlite_home, pg_url, report)
    _moved_home_answers(monkeypatch, embedder, pg_url)


@pytest.mark.postgres
def test_moving_with_rebuilt_vectors_embeds_everything_again(
    sqlite_home, pg_url, capsys, monkeypatch, embedder, home
):
    report = _migrate(pg_url, capsys, "--rebuild-vectors")

    assert report["verified"] and report["vectors"] == "rebuilt"
    rebuilt = report["vector_report"]
    assert rebuilt["indexed"] == rebuilt["chunks"] > 0 and rebuilt["entries_indexed"] == 2
    _moved_home_answers(monkeypatch, embedder, pg_url)


def test_a_target_that_already_holds_data_is_refused(sqlite_home, tmp_path, capsys):
    target = f"sqlite:///{tmp_path / 'moved' / 'elora.db'}"
    _migrate(target, capsys)

    assert main(["migrate-store", "--to", target]) != 0

    err = capsys.readouterr().err
    assert "not empty" in err and "captures" in err
