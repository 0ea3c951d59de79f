"""Undoing a logged action: approvals (and the edits, supersedes, confirmations they made),
remembers and restores. A forget's undo is core.memory.unforget's.

Nothing is undone over a later change: when an entry the action wrote has changed since, the
undo refuses and points at `elora history` / `elora restore` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import CannotUndo
from core.undo import log
from core.undo.context import labelled
from core.undo.log import Action

if TYPE_CHECKING:
    from core.services import Services

WHAT = {
    "approve": "approval",
    "remember": "remember",
    "restore": "restore",
    "forget": "forget",
    "unfade": "restore of a faded entry",
}


@dataclass
class Undone:
    """What an undo did."""

    action: Action
    restored: list[str] = field(default_factory=list)  # entries back to an earlier state
    removed: list[str] = field(default_factory=list)  # entries the action had created
    reopened: list[str] = field(default_factory=list)  # proposals back in the queue

    def summary(self) -> str:
        """One line for a surface."""
        parts = []
        if self.removed:
            parts.append("removed " + ", ".join(self.removed))
        if self.restored:
            parts.append("restored " + ", ".join(self.restored))
        if self.reopened:
            parts.append(f"{len(self.reopened)} proposal(s) back in the queue")
        what = WHAT.get(self.action.kind, self.action.kind)
        return f"undid the {what} {self.action.id[:8]}: " + ("; ".join(parts) or "nothing left")

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"action": self.action.to_json(), "restored": self.restored,
                "removed": self.removed, "reopened": self.reopened}  # fmt: skip


def pick(services: Services, action_id: str | None) -> Action:
    """The action to undo: the one named, or the latest still open."""
    if action_id:
        return log.get(services, action_id)
    found = log.recent(services, limit=1)
    if not found:
        minutes = services.settings.undo_minutes
        raise CannotUndo(f"nothing to undo: no action in the last {minutes} minutes")
    return found[0]


def undo(services: Services, action_id: str | None = None) -> Undone:
    """Undo an action (the latest open one when no id is given)."""
    services.held_forgets.purge(services.clock.now())
    action = pick(services, action_id)
    now = services.clock.now()
    if action.undone_at is not None:
        raise CannotUndo(f"action {action.id[:8]} was already undone")
    if now >= action.expires_at:
        raise CannotUndo(
            f"the undo period of action {action.id[:8]} ended at {action.expires_at:%H:%M} "
            f"(ELORA_UNDO_MINUTES={services.settings.undo_minutes})"
        )
    if action.kind == "forget":
        from core.memory.unforget import undo_forget

        return undo_forget(services, action)
    _check(services, action)
    log.claim(services, action)
    try:
        return _reverse(services, action)
    except BaseException:
        # Each step below checked it could run before anything was written; a failure here
        # is the store failing (a lock, a full disk): the action stays undoable.
        log.release(services, action)
        raise


def _check(services: Services, action: Action) -> None:
    """Refuse before writing anything when the action's work changed since."""
    from core.memory.versions import current_version, version_state

    for e in action.data.get("entries", []):
        current = current_version(services, e["uuid"])
        name = e["memory_id"]
        if current is None or not services.memory.by_uuids([e["uuid"]]):
            raise CannotUndo(f"{name} no longer exists (forgotten or removed since)")
        if current != e["after"]:
            raise CannotUndo(
                f"{name} changed since this action (now version {current}): see "
                f"`elora history {name}`, then `elora restore {name} --version N`"
            )
        if e["before"] is not None and version_state(services, e["uuid"], e["before"]) is None:
            raise CannotUndo(f"the earlier version of {name} is no longer recorded")
    for p in action.data.get("proposals", []):
        proposal = services.proposals.get(p["id"])
        if proposal is None or proposal.status != "approved":
            raise CannotUndo(f"proposal {p['id'][:8]} was removed or decided again since")


def _reverse(services: Services, action: Action) -> Undone:
    from core.learning.review import reopen
    from core.memory.tombstones import bury_digests
    from core.memory.versions import version_state, write_state

    done = Undone(action)
    services.memory.unlink(action.data.get("links", []))
    for e in action.data.get("entries", []):
        if e["before"] is None:
            services.memory.delete(e["uuid"])
            done.removed.append(e["memory_id"])
            continue
        with labelled("undo"):
            write_state(services, version_state(services, e["uuid"], e["before"]), touch=False)
        done.restored.append(e["memory_id"])
    for p in action.data.get("proposals", []):
        reopen(services, p["id"], p)
        done.reopened.append(p["id"])
    bury_digests(services, action.data.get("lifted", []))
    return done
