"""Taking things back: who acts (so an action can be undone, and its versions name the surface),
undo within ELORA_UNDO_MINUTES, an entry's versions, and bringing one back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CannotUndo
from core.memory.unforget import undo_note
from core.memory.versions import Version
from core.undo.context import Acting, acting
from core.undo.log import Action
from core.undo.reverse import Undone

if TYPE_CHECKING:
    from core.services import Services
    from core.storage.models import MemoryEntry

__all__ = ["Acting", "Action", "EntryHistory", "Undone", "Version", "acting", "undo_note"]


def undo(services: Services, action_id: str | None = None, by: int | str | None = None) -> Undone:
    """Undo an action (the latest still open when no id is given). `by`: the Telegram user
    asking; only the one who did it (or the operator) may undo it. Run it inside `acting`."""
    from core.undo import log
    from core.undo.reverse import undo as reverse

    if by is not None and action_id is not None:
        action = log.get(services, action_id)
        if action.actor not in (None, str(by)) and not services.settings.is_operator(by):
            raise CannotUndo("only the person who did this (or the operator) can undo it")
    return reverse(services, action_id)


def undoable_actions(services: Services) -> list[Action]:
    """The actions that can still be undone, newest first."""
    from core.undo.log import recent

    return recent(services)


@dataclass(frozen=True)
class EntryHistory:
    """Every version of an entry, oldest first, and the actions on it still undoable."""

    memory_id: str
    versions: list[Version]
    undoable: list[Action]


def entry_history(services: Services, memory_id: str) -> EntryHistory:
    """An entry's versions (what changed, when, on which surface) and its undoable actions."""
    from core.memory.versions import history
    from core.undo.log import about

    versions = history(services, memory_id)
    return EntryHistory(
        memory_id, versions, about(services, services.memory.require(memory_id).uuid)
    )


def entry_versions(services: Services, memory_id: str) -> list[Version]:
    """An entry's versions, oldest first (none when it does not exist)."""
    from core.memory.versions import history

    return history(services, memory_id) if services.memory.get(memory_id) else []


def restore_version(services: Services, memory_id: str, version: int) -> tuple[MemoryEntry, int]:
    """Bring an entry back to version N, as a new version (undoable); return the entry and its
    version number now."""
    from core.memory.versions import current_version, restore

    entry = restore(services, memory_id, version)
    return entry, current_version(services, entry.uuid) or version
