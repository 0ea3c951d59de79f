"""A forget's undo, held in the memory of the process that made it and nowhere else.

Forgetting one entry in a long-running process (the bot, the cockpit) keeps, in this process's
memory, the rows the forget erased: the entry, its links, versions and proposals, the traces it
scrubbed, the messages it withheld from learning and the tombstones it laid. For
ELORA_UNDO_MINUTES the forget can be undone from there; then the rows are dropped. Nothing of
it is ever written to disk: the undo log on disk names the entry's uuid and the process, not
its content. A one-shot command (`elora forget`) ends with its process, so it keeps nothing.

What a forget also erases and cannot take back: archived messages (`--with-sources`,
`--matching`): those forgets are not undoable, and the surfaces say so before confirming.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from core.errors import CannotUndo
from core.memory.forget import forget_entry
from core.storage.db import run
from core.undo import log as undo_log
from core.undo.context import current_acting, labelled

if TYPE_CHECKING:
    from core.memory.copies import ErasePlan
    from core.memory.erase import EraseReport
    from core.services import Services
    from core.undo.log import Action
    from core.undo.reverse import Undone

log = logging.getLogger(__name__)

# Tables whose rows are put back as they were; their integer keys are left to SQLite.
REINSERTED = {"memory_entries": "rowid", "entry_links": "id", "proposals": "rowid",
              "entry_versions": "id", "undo_actions": "rowid"}  # fmt: skip
NOT_ON_DISK = "nothing of it is kept on disk"


@dataclass
class Held:
    """What one forget erased, kept in memory until `expires_at`."""

    action_id: str
    uuids: list[str]
    memory_ids: list[str]
    expires_at: datetime
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    conflicts: list[tuple[int, str, str | None]] = field(default_factory=list)
    rewrites: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)  # capture ids it withheld
    tombstones: list[str] = field(default_factory=list)  # digests it laid
    logged: int = 0  # its forget_log row: later forgets by phrase block the undo


class HeldForgets:
    """This process's held forget undos, by action id (thread-safe: bot handlers and cockpit
    workers run in threads)."""

    def __init__(self) -> None:
        self._held: dict[str, Held] = {}
        self._lock = threading.Lock()

    def put(self, held: Held) -> None:
        """Hold one forget's undo."""
        with self._lock:
            self._held[held.action_id] = held

    def get(self, action_id: str) -> Held | None:
        """The held undo of an action, if this process holds it."""
        with self._lock:
            return self._held.get(action_id)

    def drop(self, action_id: str) -> None:
        """Let go of one held undo."""
        with self._lock:
            self._held.pop(action_id, None)

    def purge(self, now: datetime) -> int:
        """Let go of every held undo past its period; return how many."""
        with self._lock:
            gone = [k for k, h in self._held.items() if h.expires_at <= now]
            for k in gone:
                del self._held[k]
        return len(gone)

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)


def undo_note(services: Services) -> str:
    """What a surface says about a held forget's undo."""
    minutes = services.settings.undo_minutes
    return f"undo available for {minutes} minutes while this process runs; {NOT_ON_DISK}"


def forget(
    services: Services, memory_id: str, with_sources: bool = False
) -> tuple[EraseReport, Action | None]:
    """Forget an entry; in a long-running surface (see core.undo.context.acting) and when no
    archived message is erased, hold its undo in this process's memory. Returns the report and
    the undoable action (None: not undoable)."""
    who = current_acting()
    if with_sources or not who.holds or services.settings.undo_minutes <= 0:
        return forget_entry(services, memory_id, with_sources=with_sources), None
    entry = services.memory.require(memory_id)
    withheld = _learnable_sources(services, entry.sources)
    before = _tombstones(services)
    kept: dict[str, Any] = {}
    report = forget_entry(services, memory_id, keep=lambda conn, plan: kept.update(
        _snapshot(conn, plan)))  # fmt: skip
    if report.removed_captures:  # cannot happen without sources; never pretend to hold them
        return report, None
    action = undo_log.write(services, "forget", entry.uuid, {"held_by": undo_log.this_process()},
                            [entry.uuid])  # fmt: skip
    if action is None:
        return report, None
    logged = services.db.rows("SELECT max(id) FROM forget_log")[0][0] or 0
    held = Held(action.id, kept["uuids"], kept["memory_ids"], action.expires_at,
                kept["rows"], kept["conflicts"], kept["rewrites"], withheld,
                sorted(_tombstones(services) - before), logged)  # fmt: skip
    services.held_forgets.put(held)
    return report, action


def _learnable_sources(services: Services, sources: list[dict]) -> list[str]:
    """Source messages still material for learning (the forget withholds them)."""
    from core.memory.copies import source_capture_ids

    ids = source_capture_ids(sources or [])
    found: list[str] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        found += [r[0] for r in services.db.rows(
            f"SELECT id FROM captures WHERE consent IS NULL AND id IN ({','.join('?' * len(part))})",
            tuple(part),
        )]  # fmt: skip
    return found


def _tombstones(services: Services) -> set[str]:
    return {r[0] for r in services.db.rows("SELECT digest FROM tombstones")}


def _select(conn: Connection, table: str, where: str, params: list) -> list[dict[str, Any]]:
    if not params:
        return []
    result = run(conn, f"SELECT * FROM {table} WHERE {where}", tuple(params))
    names = list(result.keys())
    # PostgreSQL's generated full-text column is the server's to compute again, never copied.
    return [
        {n: v for n, v in zip(names, row, strict=True) if n != "search"} for row in result.all()
    ]


def _marks(values: list) -> str:
    return ",".join("?" * len(values))


def _snapshot(conn: Connection, plan: ErasePlan) -> dict[str, Any]:
    """The rows the forget is about to erase or rewrite, as they are now."""
    uuids = [e.uuid for e in plan.entries]
    rows = {
        "memory_entries": _select(conn, "memory_entries", f"uuid IN ({_marks(uuids)})", uuids),
        "entry_links": _select(
            conn, "entry_links",
            f"from_uuid IN ({_marks(uuids)}) OR to_uuid IN ({_marks(uuids)})", uuids + uuids,
        ),
        "proposals": _select(conn, "proposals", f"id IN ({_marks(plan.proposals)})",
                             list(plan.proposals)),
        "entry_versions": _select(conn, "entry_versions", f"id IN ({_marks(plan.versions)})",
                                  list(plan.versions)),
        "undo_actions": _select(conn, "undo_actions", f"id IN ({_marks(plan.undo_actions)})",
                                list(plan.undo_actions)),
    }  # fmt: skip
    conflicts = []
    if uuids:
        conflicts = [tuple(r) for r in run(conn,
            f"SELECT rowid, conflict_uuid, conflict_relation FROM proposals "
            f"WHERE conflict_uuid IN ({_marks(uuids)})", tuple(uuids),
        ) if r[0] not in {p["rowid"] for p in rows["proposals"]}]  # fmt: skip
    rewrites = []
    for rewrite in (*plan.traces, *plan.links, *plan.threads):
        columns = list(rewrite.values)
        old = _select(conn, rewrite.table, "rowid = ?", [rewrite.rowid])
        if old:
            rewrites.append((rewrite.table, rewrite.rowid, {c: old[0][c] for c in columns}))
    return {"uuids": uuids, "memory_ids": [e.memory_id for e in plan.entries], "rows": rows,
            "conflicts": conflicts, "rewrites": rewrites}  # fmt: skip


def undo_forget(services: Services, action: Action) -> Undone:
    """Put back what a forget held in this process erased (NotFound-like CannotUndo when the
    undo is held elsewhere, or was lost with the process that held it)."""
    from core.memory.tombstones import digest
    from core.undo.reverse import Undone

    held = services.held_forgets.get(action.id)
    if held is None:
        where = action.data.get("held_by") or "the process that made it"
        raise CannotUndo(
            f"this forget can only be undone in {where}, within {services.settings.undo_minutes} "
            f"minutes of it: its undo is held in that process's memory and {NOT_ON_DISK} "
            "(a one-shot `elora` command cannot reach it; it is gone if that process stopped)"
        )
    entries = held.rows["memory_entries"]
    taken = services.memory.by_uuids(held.uuids)
    for e in entries:
        if e["uuid"] in taken or services.memory.get(e["memory_id"]) is not None:
            raise CannotUndo(f"a memory {e['memory_id']} was saved since; nothing was restored")
    since = services.db.rows(
        "SELECT count(*) FROM forget_log WHERE matching = ? AND id > ?", (True, held.logged)
    )[0][0]
    if since:  # it may have covered this memory's words: consent wins over the undo
        raise CannotUndo("a forget by phrase ran since this one; nothing was restored")
    own = set(held.tombstones)
    for e in entries:
        if digest(services, e["canonical_text"]) not in own and _buried(services, e):
            raise CannotUndo(f"{e['memory_id']} was forgotten again since; nothing was restored")
    undo_log.claim(services, action)
    try:
        _put_back(services, held)
    except BaseException:
        undo_log.release(services, action)
        raise
    services.held_forgets.drop(action.id)
    for e in entries:  # re-embedded, and the history says what happened
        with labelled("forget undone"):
            services.memory.set_status(e["memory_id"], e["status"])
    return Undone(action, restored=list(held.memory_ids),
                  reopened=[p["id"] for p in held.rows["proposals"]])  # fmt: skip


def _buried(services: Services, entry: dict[str, Any]) -> bool:
    from core.memory.tombstones import is_buried

    return is_buried(services, entry["canonical_text"])


def _put_back(services: Services, held: Held) -> None:
    """Every held row back, in one transaction."""
    from core.learning.consent import FORGOTTEN

    with services.db.session(write=True) as session:
        conn = session.connection()
        for table, key in REINSERTED.items():
            for row in held.rows.get(table, []):
                values = {k: v for k, v in row.items() if k != key}
                if table == "memory_entries":
                    values["vector_state"] = "pending"
                if table == "proposals":  # a forget proposal was claimed while approved
                    values["claimed_at"] = None
                names = list(values)
                run(
                    conn,
                    f"INSERT INTO {table} ({', '.join(names)}) VALUES ({_marks(names)})",
                    tuple(values[n] for n in names),
                )
        for rowid, uuid, relation in held.conflicts:
            run(
                conn,
                "UPDATE proposals SET conflict_uuid = ?, conflict_relation = ? WHERE rowid = ?",
                (uuid, relation, rowid),
            )
        for table, rowid, old in held.rewrites:
            names = list(old)
            run(
                conn,
                f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in names)} WHERE rowid = ?",
                (*[old[n] for n in names], rowid),
            )
        if held.withheld:
            run(
                conn,
                f"UPDATE captures SET consent = NULL WHERE consent = ? "
                f"AND id IN ({_marks(held.withheld)})",
                (FORGOTTEN, *held.withheld),
            )
        if held.tombstones:
            run(
                conn,
                f"DELETE FROM tombstones WHERE digest IN ({_marks(held.tombstones)})",
                tuple(held.tombstones),
            )
