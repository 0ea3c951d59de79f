"""The undo log: actions that can be undone until they expire (ELORA_UNDO_MINUTES).

A row says what kind of action it was, what it targeted and how to take it back: the entry
versions it replaced, the links it made, the state its proposals were in. A forget's row names
the entry's uuid and the process holding its undo, nothing of the content. Past its expiry a
row is purged (`purge-undo` job); an undone row stays until then, so it cannot be undone twice.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from core.errors import CannotUndo, NotFound
from core.ids import new_id
from core.storage.db import db_time, from_db_time
from core.undo.context import Change, changing, current_acting

if TYPE_CHECKING:
    from core.services import Services

COLUMNS = ("id", "kind", "target", "surface", "actor", "entry_uuids", "data", "created_at",
           "expires_at", "undone_at")  # fmt: skip


@dataclass(frozen=True)
class Action:
    """One logged action."""

    id: str
    kind: str
    target: str
    surface: str
    actor: str | None
    entry_uuids: list[str]
    data: dict[str, Any]
    created_at: datetime
    expires_at: datetime
    undone_at: datetime | None

    def open(self, now: datetime) -> bool:
        """Whether it can still be undone (not undone, not expired)."""
        return self.undone_at is None and now < self.expires_at

    def minutes_left(self, now: datetime) -> int:
        """Whole minutes (rounded up) until it expires."""
        return max(0, -(-int((self.expires_at - now).total_seconds()) // 60))

    def to_json(self) -> dict[str, Any]:
        """Plain data (ids, kinds and times; a forget's row holds no content)."""
        return {"id": self.id, "kind": self.kind, "target": self.target,
                "surface": self.surface, "actor": self.actor,
                "created_at": self.created_at.isoformat(),
                "expires_at": self.expires_at.isoformat(),
                "undone_at": self.undone_at.isoformat() if self.undone_at else None,
                "held_by": self.data.get("held_by")}  # fmt: skip


def period(services: Services) -> timedelta:
    """How long an action can be undone."""
    return timedelta(minutes=services.settings.undo_minutes)


def this_process() -> str:
    """A name for the running process, to say where a forget's undo is held."""
    return f"{current_acting().surface} process {os.getpid()} on {socket.gethostname()}"


def write(services: Services, kind: str, target: str, data: dict[str, Any],
          entry_uuids: list[str]) -> Action | None:  # fmt: skip
    """Log an undoable action (nothing when undo is turned off); return it."""
    if services.settings.undo_minutes <= 0:
        return None
    now = services.clock.now()
    who = current_acting()
    action = Action(new_id(), kind, target, who.surface, who.actor, entry_uuids, data, now,
                    now + period(services), None)  # fmt: skip
    services.db.execute(
        f"INSERT INTO undo_actions ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * 10)})",
        (action.id, kind, target, who.surface, who.actor, json.dumps(entry_uuids),
         json.dumps(data, ensure_ascii=False, default=str), db_time(now),
         db_time(action.expires_at), None),
    )  # fmt: skip
    who.action_ids.append(action.id)
    return action


@contextmanager
def undoable(services: Services, kind: str, target: str) -> Iterator[Change]:
    """Run the block as one undoable action: what it changes is logged when it succeeds
    (an action inside another one joins it)."""
    with changing(kind, target) as (change, outermost):
        yield change
    if outermost and not change.is_empty():
        write(services, change.kind, change.target, change.to_json(), list(change.entries))


def _action(row: tuple) -> Action:
    values = dict(zip(COLUMNS, row, strict=True))
    for name in ("entry_uuids", "data"):
        if isinstance(values[name], str):
            values[name] = json.loads(values[name])
    for name in ("created_at", "expires_at"):
        values[name] = from_db_time(values[name])
    values["undone_at"] = from_db_time(values["undone_at"]) if values["undone_at"] else None
    return Action(**values)


def get(services: Services, action_id: str) -> Action:
    """One action by id (a unique prefix of at least 6 characters works); NotFound else."""
    select = f"SELECT {', '.join(COLUMNS)} FROM undo_actions"
    rows = services.db.rows(f"{select} WHERE id = ?", (action_id,))
    if not rows and len(action_id) >= 6:
        rows = services.db.rows(f"{select} WHERE id LIKE ? LIMIT 2", (action_id + "%",))
        rows = rows if len(rows) == 1 else []
    if not rows:
        raise NotFound(
            f"no undoable action {action_id!r}: it expired, was purged, or never existed "
            "(see `elora undo --list`)"
        )
    return _action(rows[0])


def recent(services: Services, include_closed: bool = False, limit: int = 50) -> list[Action]:
    """Actions newest first: the open ones (or all still logged)."""
    now = db_time(services.clock.now())
    where = "" if include_closed else "WHERE undone_at IS NULL AND expires_at > ?"
    rows = services.db.rows(
        f"SELECT {', '.join(COLUMNS)} FROM undo_actions {where} "
        "ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (limit,) if include_closed else (now, limit),
    )
    return [_action(r) for r in rows]


def about(services: Services, uuid: str) -> list[Action]:
    """The open actions that changed an entry, newest first."""
    return [a for a in recent(services, limit=500) if uuid in a.entry_uuids]


def claim(services: Services, action: Action) -> None:
    """Mark an action undone before undoing it, so two surfaces never undo it twice."""
    now = services.clock.now()
    claimed = services.db.execute(
        "UPDATE undo_actions SET undone_at = ? WHERE id = ? AND undone_at IS NULL "
        "AND expires_at > ?",
        (db_time(now), action.id, db_time(now)),
    )
    if claimed != 1:
        current = get(services, action.id)
        if current.undone_at is not None:
            raise CannotUndo(f"action {action.id[:8]} was already undone")
        raise CannotUndo(f"the undo period of action {action.id[:8]} has ended")


def release(services: Services, action: Action) -> None:
    """Reopen a claimed action whose undo failed (it can be tried again)."""
    services.db.execute("UPDATE undo_actions SET undone_at = NULL WHERE id = ?", (action.id,))


def purge_expired(services: Services) -> int:
    """Delete the actions past their undo period; return how many."""
    return services.db.execute(
        "DELETE FROM undo_actions WHERE expires_at <= ?", (db_time(services.clock.now()),)
    )


def scan_actions(conn: Connection) -> Iterator[tuple]:
    """(id, entry_uuids, data as stored) of every logged action (a forget's scan)."""
    yield from conn.exec_driver_sql("SELECT id, entry_uuids, data FROM undo_actions")


def delete_actions(conn: Connection, action_ids: list[str]) -> None:
    """Drop logged actions by id (a forget's erase: they named what it erases)."""
    if action_ids:
        conn.exec_driver_sql("DELETE FROM undo_actions WHERE id = ?",
                             [(a,) for a in action_ids])  # fmt: skip
