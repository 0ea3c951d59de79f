"""Who is acting, and what the action in progress changed.

A surface says who acts (`acting("telegram", actor=user_id, holds=True)`); the core function it
calls opens an `action` (approve, remember, restore); the memory store reports every version it
writes and every link it makes to that action, so the undo knows exactly what to take back.
Context variables carry this through the call: the functions in between keep their signatures.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Acting:
    """Who acts on which surface; `holds`: the process lives on, so a forget's undo can wait
    in its memory (the bot, the cockpit), unlike a one-shot command."""

    surface: str
    actor: str | None = None
    holds: bool = False
    action_ids: list[str] = field(default_factory=list)

    @property
    def last_action(self) -> str | None:
        """The id of the last undoable action done while acting, if any."""
        return self.action_ids[-1] if self.action_ids else None


@dataclass
class Change:
    """What one action changed: entry versions, links, proposals, tombstones lifted."""

    kind: str
    target: str
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    links: list[int] = field(default_factory=list)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    lifted: list[str] = field(default_factory=list)

    def wrote(self, uuid: str, memory_id: str, before: int | None, after: int) -> None:
        """An entry went from version `before` (None: it did not exist) to `after`."""
        seen = self.entries.setdefault(uuid, {"memory_id": memory_id, "before": before})
        seen["after"] = after

    def proposal_before(self, proposal_id: str, state: dict[str, Any]) -> None:
        """A proposal's state before the action decided it (kept once, the first)."""
        self.proposals.setdefault(proposal_id, state)

    def is_empty(self) -> bool:
        """Nothing was changed (nothing to undo)."""
        return not (self.entries or self.links or self.proposals)

    def to_json(self) -> dict[str, Any]:
        """The undo data stored with the action."""
        return {
            "entries": [{"uuid": u, **e} for u, e in self.entries.items()],
            "links": list(self.links),
            "proposals": [{"id": p, **s} for p, s in self.proposals.items()],
            "lifted": list(self.lifted),
        }


_ACTING: ContextVar[Acting | None] = ContextVar("elora_acting", default=None)
_CHANGE: ContextVar[Change | None] = ContextVar("elora_change", default=None)


@contextmanager
def acting(surface: str, actor: str | None = None, holds: bool = False) -> Iterator[Acting]:
    """Act as `actor` on `surface` for the duration of the block."""
    who = Acting(surface, None if actor is None else str(actor), holds)
    token = _ACTING.set(who)
    try:
        yield who
    finally:
        _ACTING.reset(token)


def current_acting() -> Acting:
    """Who is acting now (the system, e.g. a job, when no surface said)."""
    return _ACTING.get() or Acting("system")


def current_change() -> Change | None:
    """The action in progress, if any."""
    return _CHANGE.get()


@contextmanager
def changing(kind: str, target: str) -> Iterator[tuple[Change, bool]]:
    """Collect what the block changes under one action; nested actions join the outer one.
    Yields (change, outermost): only the outermost action is logged."""
    outer = _CHANGE.get()
    if outer is not None:
        yield outer, False
        return
    change = Change(kind, target)
    token = _CHANGE.set(change)
    try:
        yield change, True
    finally:
        _CHANGE.reset(token)


_LABEL: ContextVar[str | None] = ContextVar("elora_version_label", default=None)


@contextmanager
def labelled(label: str) -> Iterator[None]:
    """Name the versions written in the block (e.g. "confirm", "superseded")."""
    token = _LABEL.set(label)
    try:
        yield
    finally:
        _LABEL.reset(token)


def current_label() -> str | None:
    """How a version written now should be named, if a caller said (innermost first)."""
    return _LABEL.get()
