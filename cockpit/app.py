"""The cockpit app: screens as modes, keyboard-first, services injected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from cockpit.runner import BackgroundLoop
from cockpit.screens.base import REFRESH_SECONDS
from cockpit.screens.chat import ChatScreen
from cockpit.screens.council import CouncilScreen
from cockpit.screens.health import HealthScreen
from cockpit.screens.memory import MemoryScreen
from cockpit.screens.proposals import ProposalsScreen
from cockpit.screens.traces import TracesScreen
from cockpit.widgets.dialogs import HelpScreen

if TYPE_CHECKING:
    from core.services import Services

SCREENS = ("proposals", "memory", "chat", "traces", "health", "council")
# One footer entry for all the screen keys; an Input swallows digits, so the footer then
# shows the F-keys instead (the footer keeps the first visible binding of each action).
SWITCH = Binding.Group("Screens", compact=True)


class Cockpit(App):
    """Review, curate, chat, inspect and watch Elora from the terminal."""

    CSS_PATH = "cockpit.tcss"
    TITLE = "Elora"
    # The footer needs the room at 80 columns, and `?` already lists every key.
    ENABLE_COMMAND_PALETTE = False
    MODES = {
        "proposals": ProposalsScreen,
        "memory": MemoryScreen,
        "chat": ChatScreen,
        "traces": TracesScreen,
        "health": HealthScreen,
        "council": CouncilScreen,
    }
    DEFAULT_MODE = "proposals"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        # Help and quit first: at 80 columns the footer's end is cut off.
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        *[
            Binding(str(n), f"switch_mode('{mode}')", mode.title(), group=SWITCH)
            for n, mode in enumerate(SCREENS, 1)
        ],
        *[
            Binding(f"f{n}", f"switch_mode('{mode}')", mode.title(), group=SWITCH, priority=True)
            for n, mode in enumerate(SCREENS, 1)
        ],
    ]

    def __init__(
        self,
        services: Services,
        scheduler: bool = False,
        refresh_seconds: float | None = REFRESH_SECONDS,
    ):
        super().__init__()
        self.services = services
        self.with_scheduler = scheduler
        # How often the visible screen reloads, so what the bot writes shows up (None: never).
        self.refresh_seconds = refresh_seconds
        self.loop_runner = BackgroundLoop()
        self.scheduler = None

    def on_mount(self) -> None:
        if self.with_scheduler:
            self.scheduler = self.loop_runner.run(self._start_scheduler())

    async def _start_scheduler(self):
        # Jobs run on the background loop: they touch the database and the models, and an
        # AsyncIOScheduler runs its jobs on the loop it was started from.
        from core import app as elora

        return elora.start_scheduler(self.services)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def on_unmount(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
        self.loop_runner.close()
