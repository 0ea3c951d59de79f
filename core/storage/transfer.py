"""Moving a home's database to another (`elora migrate-store --to URL`): every table, verified.

The target is migrated first (the same numbered migrations), must be empty, and receives
every row of every table both sides have, with its ids (rowid, id), in one transaction: a
copy that fails halfway leaves the target empty. The source is read in one transaction too,
a consistent snapshot even while a bot keeps writing. Columns the target computes itself
(PostgreSQL's full-text `search`) are left to it; SQLite's FTS tables are filled by their
triggers. Afterwards each table's rows are counted on both sides, and PostgreSQL's identity
sequences are moved past the copied ids so new rows never collide with them.

Vectors live in Chroma under the same ids (chunk ids, entry uuids), so the same Chroma
(embedded under ELORA_HOME, or ELORA_CHROMA_URL) serves the moved database as it is;
`rebuild_vectors` makes them anew from the target instead (another Chroma, another model).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    DateTime,
    MetaData,
    Table,
    Text,
    insert,
    inspect,
    text,
)

from core.errors import InvalidInput, StorageError
from core.storage.db import Database, from_db_time

log = logging.getLogger(__name__)

BATCH = 2000
# Bookkeeping each database keeps for itself (the migrations applied, SQLite's memory stamp),
# SQLite's FTS5 tables (filled by triggers) and the words' document counts (SQLite's fts5vocab
# view, a trigger's table on PostgreSQL).
SKIPPED = {"schema_migrations", "captures_vocab", "memory_stamp"}
_FTS_SUFFIXES = ("_fts", "_fts_data", "_fts_idx", "_fts_docsize", "_fts_config", "_fts_content")


@dataclass
class TransferReport:
    """What was copied: rows per table on each side."""

    source: str
    target: str
    tables: dict[str, dict[str, int]] = field(default_factory=dict)
    vectors: str = "reused"
    vector_report: dict[str, Any] | None = None

    @property
    def verified(self) -> bool:
        """Whether every table holds as many rows on both sides."""
        return all(t["source"] == t["target"] for t in self.tables.values())

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "source": self.source,
            "target": self.target,
            "verified": self.verified,
            "tables": self.tables,
            "rows": sum(t["target"] for t in self.tables.values()),
            "vectors": self.vectors,
            "vector_report": self.vector_report,
        }


def _user_tables(conn: Connection) -> list[str]:
    names = inspect(conn).get_table_names()
    return [n for n in names if n not in SKIPPED and not n.endswith(_FTS_SUFFIXES)]


def _count(conn: Connection, table: str) -> int:
    return int(conn.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one())


def copy_database(
    source: Database, target: Database, progress: Callable[[str, int], None] | None = None
) -> TransferReport:
    """Copy every row of `source` into the empty `target` (migrated first); counts verified."""
    if source.url == target.url:
        raise InvalidInput("the target is the database in use: name another one")
    report = TransferReport(source=source.safe_url, target=target.safe_url)
    target_meta = MetaData()
    with target.engine.connect() as out:
        target_meta.reflect(out)
        for table in target_meta.tables.values():
            for column in table.columns:
                if isinstance(column.type, JSON):  # copied as the text it is stored as
                    column.type = Text()
        busy = {name: n for name in _user_tables(out) if (n := _count(out, name))}
    if busy:
        listing = ", ".join(f"{n:,} {name}" for name, n in sorted(busy.items()))
        raise InvalidInput(f"the target database is not empty ({listing}); give an empty one")
    with source.engine.connect() as src, target.engine.connect() as out:
        src_tables = set(_user_tables(src))
        tables = [t for t in target_meta.sorted_tables if t.name in src_tables]
        missing = sorted(src_tables - {t.name for t in tables})
        if missing:  # the source is newer than this code: refuse rather than drop data
            raise StorageError(f"the target has no table for {', '.join(missing)}: upgrade Elora")
        src.rollback()  # the look at the schemas above began transactions: start afresh
        out.rollback()
        with src.begin(), out.begin():
            for table in tables:
                copied = _copy_table(src, out, table, progress)
                report.tables[table.name] = {"source": copied, "target": 0}
            if target.dialect == "postgresql":
                _move_identities(out, tables)
        for table in tables:
            report.tables[table.name]["target"] = _count(out, table.name)
            report.tables[table.name]["source"] = _count(src, table.name)
    return report


def _copy_table(
    src: Connection, out: Connection, table: Table, progress: Callable[[str, int], None] | None
) -> int:
    """Copy one table in batches; return how many rows were read."""
    source_columns = {c["name"] for c in inspect(src).get_columns(table.name)}
    columns = [
        c for c in table.columns if c.name in source_columns and c.computed is None
    ]  # a computed column (PostgreSQL's `search`) is the target's to fill
    names = ", ".join(f'"{c.name}"' for c in columns)
    order = _order(src, table.name, source_columns)
    if src.dialect.name == "postgresql":  # a server cursor: the table is never all in memory
        src = src.execution_options(stream_results=True)
    result = src.execute(text(f'SELECT {names} FROM "{table.name}"{order}'))
    copied = 0
    while rows := result.fetchmany(BATCH):
        out.execute(insert(table), [_row(columns, row) for row in rows])
        copied += len(rows)
        if progress:
            progress(table.name, len(rows))
    return copied


def _order(conn: Connection, table: str, columns: set[str]) -> str:
    return " ORDER BY rowid" if "rowid" in columns or conn.dialect.name == "sqlite" else ""


def _row(columns, row) -> dict[str, Any]:
    """A source row as the target's column types take it (SQLite keeps times as text and
    booleans as integers)."""
    values = {}
    for column, value in zip(columns, row, strict=True):
        if (
            value is not None
            and isinstance(column.type, DateTime)
            and not isinstance(value, datetime)
        ):
            value = from_db_time(value)
        elif value is not None and isinstance(column.type, Boolean):
            value = bool(value)
        values[column.name] = value
    return values


def _move_identities(out: Connection, tables: list[Table]) -> None:
    """Start each identity column after the largest copied id."""
    for table in tables:
        for column in table.primary_key.columns:
            sequence = out.execute(
                text("SELECT pg_get_serial_sequence(:t, :c)"),
                {"t": table.name, "c": column.name},
            ).scalar_one()
            if sequence:
                out.execute(
                    text(
                        f'SELECT setval(:s, coalesce(max("{column.name}"), 0) + 1, false) '
                        f'FROM "{table.name}"'
                    ),
                    {"s": sequence},
                )
