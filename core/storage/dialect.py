"""The statements SQL dialects spell differently, built in one place.

Upserts: SQLite (3.24 and later) and PostgreSQL both say INSERT … ON CONFLICT, which
SQLAlchemy's PostgreSQL `insert` builds and SQLite's compiler renders too, so one statement
serves both. JSON columns are text on both databases (core.storage.models.JSONText); the few
queries that look inside one use the helpers below.
"""

from __future__ import annotations

from typing import Any


def _insert(model: Any):
    # Imported on first use: SQLAlchemy's PostgreSQL dialect costs a tenth of a second, which a
    # one-shot read (`elora context`) never needs.
    from sqlalchemy.dialects.postgresql import insert

    return insert(model)


def insert_ignoring(model: Any, rows: list[dict[str, Any]] | dict[str, Any]):
    """INSERT that skips rows whose key already exists (the table's primary or unique key)."""
    return _insert(model).values(rows).on_conflict_do_nothing()


def upsert(model: Any, row: dict[str, Any], keys: list[str]):
    """INSERT, or UPDATE the row with the same `keys` to these values."""
    statement = _insert(model).values(row)
    changed = {name: value for name, value in row.items() if name not in keys}
    return statement.on_conflict_do_update(index_elements=keys, set_=changed)


def json_list_holds(dialect: str, column: str, param: str) -> str:
    """SQL: the JSON list stored (as text) in `column` holds the string `:param`."""
    if dialect == "postgresql":
        return (
            f"EXISTS (SELECT 1 FROM json_array_elements_text(CAST({column} AS json)) AS j(value) "
            f"WHERE j.value = :{param})"
        )
    return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = :{param})"


def json_field(dialect: str, column: str, key: str) -> str:
    """SQL: the value at top-level `key` of the JSON object stored (as text) in `column`, as
    text (NULL when absent). `key` is a constant of the code, never user input."""
    if dialect == "postgresql":
        return f"(CAST({column} AS json) ->> '{key}')"
    return f"json_extract({column}, '$.{key}')"


def json_strings(dialect: str, column: str, key: str, alias: str) -> tuple[str, str, str]:
    """A FROM item listing the strings of the JSON list at top-level `key` of `column`:
    (the FROM item, the SQL of one string, the condition that keeps strings only)."""
    if dialect == "postgresql":
        return (
            f"json_array_elements(CAST({column} AS json) -> '{key}') AS {alias}(item)",
            f"({alias}.item #>> '{{}}')",
            f"json_typeof({alias}.item) = 'string'",
        )
    return f"json_each({column}, '$.{key}') AS {alias}", f"{alias}.value", f"{alias}.type = 'text'"
