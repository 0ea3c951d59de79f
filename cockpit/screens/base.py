"""What every cockpit screen shares: services access, background work, periodic refresh."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer
from textual.worker import Worker, WorkerState

from core.errors import EloraError

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

REFRESH_SECONDS = 5.0
# Tier names shortened for a narrow table column.
TIER_SHORT = {"semantic": "sem", "episodic": "epi", "procedural": "proc",
              "personalized": "pers", "environment": "env"}  # fmt: skip


class EloraScreen(Screen):
    """A screen that loads its data in worker threads and refreshes itself.

    Textual calls a message handler (on_mount, on_worker_state_changed...) once for every class
    of the MRO that defines one: a subclass's handler must not call super()'s, or this class's
    runs twice (two refresh timers, every result shown twice).
    """

    BINDINGS = [
        Binding("ctrl+r", "refresh_data", "Refresh", show=False),
        Binding("z", "undo", "Undo", show=False),
    ]
    periodic_refresh = True  # False where reloading would only disturb (chat, council)

    @property
    def services(self) -> Services:
        """The services the app was started with."""
        return self.app.services  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        seconds = self.app.refresh_seconds  # type: ignore[attr-defined]
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
        query = self.query_state()  # read on the UI thread, used in the worker
        self.background(lambda: self.load(query), self.show, group="load")

    def query_state(self) -> Any:
        """What the next load depends on (filters, page, view), read from the widgets."""
        return None

    def load(self, query: Any) -> Any:  # runs in a worker thread
        """Fetch the screen's data (override)."""
        return None

    def show(self, data: Any) -> None:  # runs on the UI thread
        """Display fetched data (override)."""

    def background(
        self,
        fn: Callable[[], Any],
        done: Callable[[Any], None] | None = None,
        group: str = "action",
        success: str | None = None,
    ) -> Worker:
        """Run `fn` in a thread; hand its result to `done` on the UI thread; errors → notify."""

        def job() -> Any:
            return fn()

        # A newer load or detail makes the older one moot: its result is dropped.
        exclusive = group in ("load", "detail")
        worker = self.run_worker(
            job, thread=True, group=group, exclusive=exclusive, exit_on_error=False
        )
        worker._elora_done = (done, success)  # type: ignore[attr-defined]
        return worker

    def as_operator(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """`fn` run as the operator in the cockpit, a long-running process: what it does can be
        undone with `z` (a forget's undo is held in this process's memory only)."""

        def run() -> Any:
            from core.undo.context import acting

            with acting("cockpit", holds=True):
                return fn()

        return run

    def undo_hint(self) -> str:
        """What a notification adds after an undoable action."""
        minutes = self.services.settings.undo_minutes
        return f" · z undoes it ({minutes} min)" if minutes else ""

    def action_undo(self) -> None:
        """z: undo the last action still open (approve, edit, remember, restore, forget)."""
        from core.undo.reverse import undo

        def done(result: Any) -> None:
            self.notify(result.summary()[:300], timeout=8)
            self.action_refresh_data()

        self.background(self.as_operator(lambda: undo(self.services)), done)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        done, success = getattr(event.worker, "_elora_done", (None, None))
        if event.state == WorkerState.SUCCESS:
            if done is not None:
                try:
                    done(event.worker.result)
                except Exception as exc:  # a display bug must not take the cockpit down
                    log.exception("cockpit could not show a result")
                    self.notify(f"display error: {type(exc).__name__}: {exc}"[:300],
                                severity="error", timeout=8)  # fmt: skip
                    return
            if success:
                self.notify(success)
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            message = (
                str(error) if isinstance(error, EloraError) else f"{type(error).__name__}: {error}"
            )
            self.notify(message[:300], severity="error", timeout=8)
            if event.worker.group == "action":
                # The action failed, often because the data changed underneath (the bot
                # approved that proposal first): show what is there now.
                self.action_refresh_data()


def refill(table: DataTable, rows: list[tuple[str, tuple[str, ...]]], top: bool = False) -> bool:
    """Replace a table's rows, keeping the cursor on the same row (or at the same place when
    that row is gone; at the top with `top`); an unchanged reload leaves the table alone, so
    periodic refreshes never disturb the reader. Returns whether anything changed.
    """
    if getattr(table, "_elora_rows", None) == rows:
        return False
    selected = None
    if table.row_count:
        selected = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    index = table.cursor_row
    table.clear()
    for key, cells in rows:
        table.add_row(*cells, key=key)
    table._elora_rows = rows  # type: ignore[attr-defined]
    keys = [key for key, _ in rows]
    if top:
        return True
    if selected in keys:
        table.move_cursor(row=keys.index(selected))
    elif rows:
        table.move_cursor(row=min(max(index, 0), len(rows) - 1))
    return True
