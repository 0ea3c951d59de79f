import sqlite3

import pytest
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

import core.storage.models  # noqa: F401  (registers every table on SQLModel.metadata)
from core.storage.db import Database
from core.storage.migrations import MIGRATIONS, applied_versions, migrate

# SQLite itself: its files, PRAGMAs and FTS5 tables (tests/core/storage/test_postgres.py
# checks the same on PostgreSQL).
pytestmark = pytest.mark.sqlite_only

FTS_TABLES = {"captures_fts", "chunks_fts", "entries_fts"}

_RAW_CAPTURE = (
    "INSERT INTO captures (id, surface, chat_id, message_id, text, sent_at, captured_at) "
    "VALUES (:id, 'telegram', '42', :mid, :text, '2024-05-01 10:00:00', '2024-05-01 10:00:00')"
)


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "db" / "elora.db"


def _create_database(path) -> None:
    db = Database(f"sqlite:///{path}")
    with db.session():  # first use creates the file and applies every migration
        pass
    db.close()


def _names(path, kind: str) -> set[str]:
    with sqlite3.connect(path) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))}


def _migration_rows(path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as con:
        return con.execute(
            "SELECT version, applied_at FROM schema_migrations ORDER BY version"
        ).fetchall()


def test_empty_database_gets_every_table_and_fts_index(db_path):
    _create_database(db_path)

    tables = _names(db_path, "table")
    assert set(SQLModel.metadata.tables) <= tables
    assert tables >= FTS_TABLES | {"schema_migrations"}


def test_empty_database_records_every_migration_once(db_path):
    _create_database(db_path)

    versions = [version for version, _ in _migration_rows(db_path)]
    assert versions == sorted(v for v, _, _ in MIGRATIONS)


def test_reopening_applies_nothing_and_keeps_data(db_path):
    url = f"sqlite:///{db_path}"
    first = Database(url)
    with first.session() as session:
        session.execute(text(_RAW_CAPTURE), {"id": "c1", "mid": "1", "text": "on garde tout"})
    first.close()
    before = _migration_rows(db_path)

    again = Database(url)
    with again.engine.connect() as conn:
        assert migrate(conn) == []
    with again.session() as session:
        texts = session.execute(text("SELECT text FROM captures")).scalars().all()
    again.close()

    assert texts == ["on garde tout"]
    assert _migration_rows(db_path) == before


def test_database_from_first_release_is_upgraded_and_keeps_searchable_data(db_path):
    db_path.parent.mkdir(parents=True)
    url = f"sqlite:///{db_path}"
    version, name, first_migration = sorted(MIGRATIONS, key=lambda m: m[0])[0]
    old = create_engine(url)
    with old.connect() as conn:
        applied_versions(conn)
        first_migration(conn)
        conn.execute(
            text("INSERT INTO schema_migrations VALUES (:v, :n, '2024-01-01 00:00:00')"),
            {"v": version, "n": name},
        )
        conn.execute(text(_RAW_CAPTURE), {"id": "c1", "mid": "7", "text": "Je déménage à Lyon"})
        conn.commit()
    old.dispose()
    assert not FTS_TABLES & _names(db_path, "table")

    db = Database(url)
    with db.session() as session:
        conn = session.connection()
        texts = conn.exec_driver_sql("SELECT text FROM captures").scalars().all()
        found = conn.exec_driver_sql(
            "SELECT c.id FROM captures_fts JOIN captures c ON c.rowid = captures_fts.rowid "
            "WHERE captures_fts MATCH 'demenage'"
        ).scalars()
        found = list(found)
    db.close()

    assert [v for v, _ in _migration_rows(db_path)] == sorted(v for v, _, _ in MIGRATIONS)
    assert texts == ["Je déménage à Lyon"]
    assert found == ["c1"]  # rows written before the FTS migration are searchable too


def test_every_model_has_exactly_the_columns_the_migrations_create(db_path):
    _create_database(db_path)

    with sqlite3.connect(db_path) as con:
        for name, table in SQLModel.metadata.tables.items():
            info = con.execute(f"PRAGMA table_info({name})").fetchall()
            assert info, f"table {name} is declared in models.py but no migration creates it"
            ddl = {row[1]: {"not_null": bool(row[3]), "pk": bool(row[5])} for row in info}
            model = {
                c.name: {"not_null": not c.nullable, "pk": bool(c.primary_key)}
                for c in table.columns
            }
            assert set(ddl) == set(model), f"{name}: columns differ"
            for column, spec in model.items():
                assert ddl[column]["pk"] == spec["pk"], f"{name}.{column}: primary key differs"
                if not spec["pk"]:
                    assert ddl[column]["not_null"] == spec["not_null"], (
                        f"{name}.{column}: NOT NULL differs"
                    )


def test_messages_archived_before_migration_7_carry_their_consent_and_speaker(db_path):
    db_path.parent.mkdir(parents=True)
    url = f"sqlite:///{db_path}"
    old = create_engine(url)
    with old.connect() as conn:
        applied_versions(conn)
        for version, name, fn in sorted(MIGRATIONS, key=lambda m: m[0]):
            if version >= 7:
                break
            fn(conn)
            conn.execute(
                text("INSERT INTO schema_migrations VALUES (:v, :n, '2024-01-01 00:00:00')"),
                {"v": version, "n": name},
            )
        for cid, surface, role, body in (
            ("c1", "cli", "user", "Ne retiens pas ça : je joue du violoncelle le mardi soir."),
            ("c2", "cli", "assistant", "Entendu."),
            ("c3", "chatgpt", "user", "Never store anything about my health."),
            ("c4", "telegram", "user", "Je suis en congé du 6 au 10 mai"),
        ):
            conn.execute(
                text(
                    "INSERT INTO captures (id, surface, chat_id, message_id, role, text, sent_at, "
                    "captured_at) VALUES (:id, :s, '42', :id, :r, :t, '2024-05-01 10:00:00', "
                    "'2024-05-01 10:00:00')"
                ),
                {"id": cid, "s": surface, "r": role, "t": body},
            )
        conn.commit()
    old.dispose()

    db = Database(url)
    rows = db.rows("SELECT id, consent, is_operator FROM captures ORDER BY id")
    db.close()

    assert rows == [
        ("c1", "dont_remember", 1),
        ("c2", None, 0),
        ("c3", "never_store", 1),
        ("c4", None, None),  # a Telegram speaker is resolved once the operator is known
    ]
