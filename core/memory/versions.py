"""Entry versions: every state an entry is written in, so its history can be read and any
version brought back (as a new version: history only grows).

MemoryStore writes a version in the same transaction as each change (create, approve, edit,
confirm, supersede, restore, undo...), naming the surface and who acted (core.undo.context).
An entry older than versions gets a "baseline" version of its state before its first change.
Versions are copies of the entry's text: forgetting the entry erases them with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from core.errors import InvalidInput, NotFound
from core.storage.db import db_time, from_db_time, run
from core.undo.context import current_acting, current_change, current_label

if TYPE_CHECKING:
    from sqlmodel import Session

    from core.services import Services
    from core.storage.models import MemoryEntry

# What a version holds: every field the memory API writes (created_at never changes).
FIELDS = ("memory_id", "tier", "kind", "canonical_text", "embedding_text", "truth_mode", "scope",
          "importance", "confidence", "observations", "topics", "valid_from", "valid_to",
          "status", "last_touched", "sources", "attributes")  # fmt: skip
DATES = ("valid_from", "valid_to", "last_touched")


@dataclass(frozen=True)
class Version:
    """One recorded state of an entry."""

    version: int
    change: str
    surface: str
    actor: str | None
    created_at: datetime
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"version": self.version, "change": self.change, "surface": self.surface,
                "actor": self.actor, "created_at": self.created_at.isoformat(), **self.data}  # fmt: skip


def state_of(row: MemoryEntry) -> dict[str, Any]:
    """An entry's versioned fields as plain JSON data."""
    data = {name: getattr(row, name) for name in FIELDS}
    for name in DATES:
        if data[name] is not None:
            data[name] = data[name].isoformat()
    data["topics"], data["sources"] = list(data["topics"] or []), list(data["sources"] or [])
    data["attributes"] = dict(data["attributes"] or {})
    return data


def latest(conn: Connection, uuid: str) -> int | None:
    """The newest version number of an entry, or None when none was recorded."""
    return run(
        conn, "SELECT max(version) FROM entry_versions WHERE entry_uuid = ?", (uuid,)
    ).scalar()


def _insert(conn: Connection, row: MemoryEntry, version: int, change: str, surface: str,
            actor: str | None, at: datetime) -> None:  # fmt: skip
    import json

    run(conn,
        "INSERT INTO entry_versions (entry_uuid, version, change, surface, actor, data, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (row.uuid, version, change, surface, actor,
         json.dumps(state_of(row), ensure_ascii=False, default=str), db_time(at)),
    )  # fmt: skip


def delete_of(conn: Connection, uuids: list[str]) -> None:
    """Drop every version of these entries (an entry removed as if never written)."""
    conn.exec_driver_sql("DELETE FROM entry_versions WHERE entry_uuid = ?", [(u,) for u in uuids])


def scan_versions(conn: Connection) -> Iterator[tuple]:
    """(id, entry_uuid, version, data as stored, the entry's newest version) of every version
    (a forget's scan, core.memory.copies)."""
    yield from conn.exec_driver_sql(
        "SELECT v.id, v.entry_uuid, v.version, v.data, "
        "(SELECT max(w.version) FROM entry_versions w WHERE w.entry_uuid = v.entry_uuid) "
        "FROM entry_versions v"
    )


def delete_versions(conn: Connection, version_ids: list[int]) -> None:
    """Drop versions by id (a forget's erase, core.memory.erase)."""
    if version_ids:
        conn.exec_driver_sql("DELETE FROM entry_versions WHERE id = ?",
                             [(v,) for v in version_ids])  # fmt: skip


def keep_baseline(session: Session, row: MemoryEntry) -> None:
    """Before the first recorded change of an entry written before versions were kept, record
    the state it is in now (call before modifying the row)."""
    conn = session.connection()
    if latest(conn, row.uuid) is None:
        _insert(conn, row, 1, "baseline", "system", None, row.last_touched)


def record(session: Session, row: MemoryEntry, created: bool, now: datetime) -> int:
    """Record the state `row` was just written in as a new version; return its number. The
    action in progress (if any) learns which version it replaced, to undo it."""
    conn = session.connection()
    before = None if created else latest(conn, row.uuid)
    after = (latest(conn, row.uuid) or 0) + 1
    who = current_acting()
    change = current_label() or ("create" if created else "update")
    _insert(conn, row, after, change, who.surface, who.actor, now)
    action = current_change()
    if action is not None:
        action.wrote(row.uuid, row.memory_id, before, after)
    return after


def history(services: Services, memory_id: str) -> list[Version]:
    """Every recorded version of an entry, oldest first (the current state alone when the
    entry has not changed since versions were kept)."""
    import json

    entry = services.memory.require(memory_id)
    rows = services.db.rows(
        "SELECT version, change, surface, actor, created_at, data FROM entry_versions "
        "WHERE entry_uuid = ? ORDER BY version",
        (entry.uuid,),
    )
    if not rows:
        return [Version(1, "baseline", "system", None, entry.last_touched, state_of(entry))]
    return [
        Version(v, change, surface, actor, from_db_time(at),
                data if isinstance(data, dict) else json.loads(data))
        for v, change, surface, actor, at, data in rows
    ]  # fmt: skip


def current_version(services: Services, uuid: str) -> int | None:
    """The newest version number of an entry (None: none recorded)."""
    with services.db.session() as session:
        return latest(session.connection(), uuid)


def version_state(services: Services, uuid: str, version: int) -> dict[str, Any] | None:
    """The fields of one version of an entry, or None when it is not recorded."""
    import json

    rows = services.db.rows(
        "SELECT data FROM entry_versions WHERE entry_uuid = ? AND version = ?", (uuid, version)
    )
    if not rows:
        return None
    data = rows[0][0]
    return data if isinstance(data, dict) else json.loads(data)


def write_state(services: Services, state: dict[str, Any], touch: bool = True) -> MemoryEntry:
    """Write an entry back to a recorded state (a new version; re-embedded); the state's
    memory_id names the entry. `touch`: it counts as touched now (a restore), or keeps the
    state's own last_touched (an undo puts things back exactly as they were)."""
    data = {**state, "last_touched": services.clock.now()} if touch else dict(state)
    return services.memory.save(data)


def restore(services: Services, memory_id: str, version: int) -> MemoryEntry:
    """Bring an entry back to version N as a new version (undoable like an edit)."""
    from core.memory.tombstones import refuse_if_buried
    from core.undo.context import labelled
    from core.undo.log import undoable

    entry = services.memory.require(memory_id)
    known = history(services, memory_id)
    found = next((v for v in known if v.version == version), None)
    if found is None:
        numbers = ", ".join(str(v.version) for v in known)
        raise NotFound(f"{memory_id} has no version {version} (versions: {numbers})")
    if _same(found.data, state_of(entry)):
        raise InvalidInput(f"{memory_id} already holds what version {version} holds")
    refuse_if_buried(services, found.data["canonical_text"])
    with undoable(services, "restore", memory_id), labelled(f"restore v{version}"):
        return write_state(services, found.data)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two states hold the same memory (when it was last touched aside)."""
    return all(a.get(k) == b.get(k) for k in FIELDS if k != "last_touched")
