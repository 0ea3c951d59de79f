"""The statements SQL dialects spell differently, built in one place.

SQLite says INSERT OR IGNORE / INSERT OR REPLACE; PostgreSQL says ON CONFLICT. SQLAlchemy
builds both from the same calls, so a PostgreSQL backend changes the import below and nothing
else. Owners of tables (see the README's Architecture section) build such statements here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.sqlite import insert


def insert_ignoring(model: Any, rows: list[dict[str, Any]] | dict[str, Any]):
    """INSERT that skips rows whose key already exists (the table's primary or unique key)."""
    return insert(model).values(rows).on_conflict_do_nothing()


def upsert(model: Any, row: dict[str, Any], keys: list[str]):
    """INSERT, or UPDATE the row with the same `keys` to these values."""
    statement = insert(model).values(row)
    changed = {name: value for name, value in row.items() if name not in keys}
    return statement.on_conflict_do_update(index_elements=keys, set_=changed)
