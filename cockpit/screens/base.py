"""What every cockpit screen shares: its services, periodic refresh, and how background work
reports back.

Slow work (the database, the models) never runs on the UI thread: each screen has
`@work(thread=True, exit_on_error=False)` workers that call the front door (core.app) and post
a typed Message back, handled on the UI thread. A worker that raises is reported here, from its
state change; a failed action reloads the screen (the data often changed underneath: the bot
approved that proposal first).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual import events, work
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from core import app as elora
from core.errors import EloraError

if TYPE_CHECKING:
    from cockpit.app import Cockpit
    from core.services import Services

log = logging.getLogger(__name__)

REFRESH_SECONDS = 5.0


@dataclass
class UndoDone(Message):
    """An undo went through; what it did, in one line."""

    summary: str


Handler = TypeVar("Handler", bound=Callable[..., Any])


def shown_safely(handler: Handler) -> Handler:
    """A message handler whose display bug is reported, not fatal: the cockpit stays up."""

    @functools.wraps(handler)
    def guarded(self: Screen, *args: Any) -> Any:
        try:
            return handler(self, *args)
        except Exception as exc:
            log.exception("cockpit could not show a result")
            self.notify(f"display error: {type(exc).__name__}: {exc}"[:300],
                        severity="error", timeout=8)  # fmt: skip
            return None

    return cast(Handler, guarded)


class EloraScreen(Screen):
    """A screen that loads its data in worker threads and refreshes itself.

    Textual calls a message handler (on_mount, on_worker_state_changed...) once for every class
    of the MRO that defines one: a subclass's handler must not call super()'s, or this class's
    runs twice (two refresh timers, every error shown twice).
    """

    BINDINGS = [
        Binding("ctrl+r", "refresh_data", "Refresh", show=False),
        Binding("z", "undo", "Undo", show=False),
    ]
    periodic_refresh = True  # False where reloading would only disturb (chat, council)

    @property
    def cockpit(self) -> Cockpit:
        """The running cockpit: its services, background loop and refresh period."""
        return cast("Cockpit", self.app)

    @property
    def services(self) -> Services:
        """The services the cockpit was started with."""
        return self.cockpit.services

    def on_mount(self) -> None:
        seconds = self.cockpit.refresh_seconds
        if self.periodic_refresh and seconds:
            self.set_interval(seconds, self._tick)

    def _tick(self) -> None:
        # Only the screen in view reloads; the others catch up when they are resumed.
        if self.is_current:
            self.reload_data()

    def on_resize(self, event: events.Resize) -> None:
        # Below 100 columns the footer drops its padding so every key still fits.
        for footer in self.query(Footer):
            footer.compact = event.size.width < 100

    def on_screen_resume(self) -> None:
        self.action_refresh_data()

    def action_refresh_data(self) -> None:
        """Reload what the screen shows now: ctrl+r, a new filter, the screen coming back."""
        self.refresh_costly()
        self.reload_data()

    def refresh_costly(self) -> None:
        """Work redone when asked for, not on every periodic reload (override)."""

    def reload_data(self) -> None:
        """Start loading what the screen shows (override: start a @work loader)."""

    def as_operator(self) -> AbstractContextManager[Any]:
        """Act as the operator in the cockpit, a long-running process (wrap a worker's front-door
        call): what it does can be undone with `z` (a forget's undo is held in this process's
        memory only)."""
        return elora.acting("cockpit", holds=True)

    def undo_hint(self) -> str:
        """What a notification adds after an undoable action."""
        minutes = self.services.settings.undo_minutes
        return f" · z undoes it ({minutes} min)" if minutes else ""

    def action_undo(self) -> None:
        """z: undo the last action still open (approve, edit, remember, restore, forget)."""
        self.undo_last()

    @work(thread=True, exit_on_error=False, group="action")
    def undo_last(self) -> None:
        """Undo the latest open action, in a worker."""
        with self.as_operator():
            done = elora.undo(self.services)
        self.post_message(UndoDone(done.summary()))

    def on_undo_done(self, done: UndoDone) -> None:
        self.notify(done.summary[:300], timeout=8)
        self.action_refresh_data()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        message = (
            str(error) if isinstance(error, EloraError) else f"{type(error).__name__}: {error}"
        )
        self.notify(message[:300], severity="error", timeout=8)
        if event.worker.group == "action":
            self.action_refresh_data()
