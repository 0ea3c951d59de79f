"""What every cockpit screen shares: services access, background work, periodic refresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from core.errors import EloraError

if TYPE_CHECKING:
    from core.services import Services

REFRESH_SECONDS = 5.0


class EloraScreen(Screen):
    """A screen that loads its data in worker threads and refreshes itself."""

    BINDINGS = [Binding("ctrl+r", "refresh_data", "Refresh")]
    auto_refresh_seconds: float | None = REFRESH_SECONDS

    @property
    def services(self) -> Services:
        """The services the app was started with."""
        return self.app.services  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        if self.auto_refresh_seconds:
            self.set_interval(self.auto_refresh_seconds, self.action_refresh_data)

    def on_screen_resume(self) -> None:
        self.action_refresh_data()

    def action_refresh_data(self) -> None:
        """Reload what the screen shows (changes made by the bot appear this way)."""
        self.background(self.load, self.show, group="load")

    def load(self) -> Any:  # runs in a worker thread
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

        worker = self.run_worker(
            job, thread=True, group=group, exclusive=group == "load", exit_on_error=False
        )
        worker._elora_done = (done, success)  # type: ignore[attr-defined]
        return worker

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        done, success = getattr(event.worker, "_elora_done", (None, None))
        if event.state == WorkerState.SUCCESS:
            if done is not None:
                done(event.worker.result)
            if success:
                self.notify(success)
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            message = (
                str(error) if isinstance(error, EloraError) else f"{type(error).__name__}: {error}"
            )
            self.notify(message[:300], severity="error", timeout=8)
