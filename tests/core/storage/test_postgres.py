"""PostgreSQL as Elora's database: the same schema from the same migrations, search that folds
accents and stems French and English, processes that start together, the write turn, and a
server that cannot be reached (run with ELORA_TEST_DATABASE_URL; `auto` starts a cluster)."""

from __future__ import annotations

import threading
from datetime import datetime
from urllib.parse import unquote, urlsplit

import pytest
from sqlalchemy import inspect
from sqlmodel import SQLModel

import core.storage.models  # noqa: F401  (registers every table on SQLModel.metadata)
from core.archive.records import CaptureIn
from core.config import load_settings
from core.errors import StorageUnavailable
from core.services import Services
from core.storage.db import Database
from core.storage.migrations import MIGRATIONS
from tests.databases import texts
from tests.pg_cluster import with_schema

pytestmark = pytest.mark.postgres


def test_every_model_has_exactly_the_columns_the_migrations_create(pg_url):
    db = Database(pg_url)
    try:
        with db.engine.connect() as conn:
            inspector = inspect(conn)
            for name, table in SQLModel.metadata.tables.items():
                columns = {c["name"]: c for c in inspector.get_columns(name)}
                assert columns, f"table {name} is declared in models.py but no migration creates it"
                stored = {n for n, c in columns.items() if not c.get("computed")}
                assert stored == {c.name for c in table.columns}, f"{name}: columns differ"
                for column in table.columns:
                    if not column.primary_key:
                        assert columns[column.name]["nullable"] == column.nullable, (
                            f"{name}.{column.name}: NOT NULL differs"
                        )
            versions = [r[0] for r in conn.exec_driver_sql("SELECT version FROM schema_migrations")]
    finally:
        db.close()
    assert sorted(versions) == sorted(v for v, _, _ in MIGRATIONS)


def test_a_schema_gets_its_own_tables_when_another_one_on_its_path_has_elora_already(
    pg_server, pg_url
):
    first = Database(pg_url)
    first.rows("SELECT count(*) FROM captures")  # migrated, and holding a message
    first.execute("INSERT INTO meta (key, value) VALUES ('home', 'first')")
    first.close()
    schema = unquote(urlsplit(pg_url).query).split("=", 2)[2].split(",")[0]
    fresh = pg_server.create()
    own = unquote(urlsplit(fresh).query).split("=", 2)[2].split(",")[0]
    behind = with_schema(pg_server.server_url, f"{own},{schema}")  # the other one is visible
    second = Database(behind)
    try:
        assert second.rows("SELECT value FROM meta") == []  # its own, empty, meta table
        [(where,)] = second.rows(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'captures' "
            "AND table_schema = ?",
            (own,),
        )
        assert where == own
    finally:
        second.close()
        pg_server.drop(fresh)


def test_workers_starting_together_on_a_new_database_migrate_it_once(pg_url):
    databases = [Database(pg_url) for _ in range(4)]
    start = threading.Barrier(len(databases))
    errors: list[BaseException] = []

    def open_it(db: Database) -> None:
        start.wait()
        try:
            db.rows("SELECT count(*) FROM captures")
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=open_it, args=(db,)) for db in databases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    versions = databases[0].rows("SELECT version FROM schema_migrations")
    for db in databases:
        db.close()

    assert not errors, errors
    assert sorted(v for (v,) in versions) == sorted(v for v, _, _ in MIGRATIONS)


def _capture(services, text: str, message_id: str) -> None:
    services.archive.capture(
        CaptureIn(surface="telegram", chat_id="42", message_id=message_id, sender="Camille",
                  text=text, sent_at=datetime(2024, 5, 1, 9, 0)),
        index=False,
    )  # fmt: skip


def test_search_folds_accents_and_stems_french_and_english(services):
    _capture(services, "Le déménagement est prévu pour le 15 mai", "1")
    _capture(services, "We moved the meeting to Thursday", "2")
    _capture(services, "Rien à voir", "3")

    assert texts(services, "captures", "demenage") == ["Le déménagement est prévu pour le 15 mai"]
    assert texts(services, "captures", "moving") == ["We moved the meeting to Thursday"]
    assert texts(services, "chunks", "DÉMÉNAGEMENTS")[0].startswith("Camille: Le déménagement")


def test_a_write_turn_holds_off_other_writers_until_it_commits(home, embedder, monkeypatch):
    monkeypatch.setenv("ELORA_DB_BUSY_TIMEOUT_MS", "300")
    holder = Services(load_settings(), embedder=embedder)
    other = Services(load_settings(), embedder=embedder)
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.db.session(write=True) as session:
            session.connection()  # the transaction begins: the turn is taken
            entered.set()
            release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert entered.wait(60)
        # Waited the busy timeout, then gave up:
        with pytest.raises(StorageUnavailable), other.db.session(write=True) as session:
            session.connection().exec_driver_sql("SELECT 1")
        other.db.rows("SELECT count(*) FROM captures")  # reads never wait for it
    finally:
        release.set()
        thread.join(60)
    with other.db.session(write=True) as session:  # the turn is free again
        session.connection().exec_driver_sql("SELECT 1")
    holder.close()
    other.close()


def test_an_unreachable_server_spools_the_capture_and_loses_nothing(home, embedder, monkeypatch):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ELORA_DATABASE_URL", f"postgresql+psycopg://elora@127.0.0.1:{port}/elora")
    services = Services(load_settings(), embedder=embedder)
    try:
        result = services.archive.capture(
            CaptureIn(surface="telegram", chat_id="42", message_id="1", text="Je suis là",
                      sent_at=datetime(2024, 5, 1, 9, 0))
        )  # fmt: skip
    finally:
        services.close()

    assert result.status == "spooled"
    assert services.spool.backlog() == 1
