"""The cockpit app: screens as modes, keyboard-first, services injected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from cockpit.runner import BackgroundLoop
from cockpit.screens.chat import ChatScreen
from cockpit.screens.council import CouncilScreen
from cockpit.screens.health import HealthScreen
from cockpit.screens.memory import MemoryScreen
from cockpit.screens.proposals import ProposalsScreen
from cockpit.screens.traces import TracesScreen
from cockpit.widgets.dialogs import HelpScreen

if TYPE_CHECKING:
    from core.services import Services


class Cockpit(App):
    """Review, curate, chat, inspect and watch Elora from the terminal."""

    CSS_PATH = "cockpit.tcss"
    TITLE = "Elora"
    MODES = {
        "proposals": ProposalsScreen,
        "memory": MemoryScreen,
        "chat": ChatScreen,
        "traces": TracesScreen,
        "health": HealthScreen,
        "council": CouncilScreen,
    }
    DEFAULT_MODE = "proposals"
    BINDINGS = [
        Binding("1", "switch_mode('proposals')", "Proposals"),
        Binding("2", "switch_mode('memory')", "Memory"),
        Binding("3", "switch_mode('chat')", "Chat"),
        Binding("4", "switch_mode('traces')", "Traces"),
        Binding("5", "switch_mode('health')", "Health"),
        Binding("6", "switch_mode('council')", "Council"),
        *[
            Binding(f"f{n}", f"switch_mode('{mode}')", mode.title(), show=False, priority=True)
            for n, mode in enumerate(
                ("proposals", "memory", "chat", "traces", "health", "council"), 1
            )
        ],
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, services: Services, scheduler: bool = False):
        super().__init__()
        self.services = services
        self.with_scheduler = scheduler
        self.loop_runner = BackgroundLoop()
        self.scheduler = None

    def on_mount(self) -> None:
        if self.with_scheduler:
            from core.jobs.scheduler import start_scheduler

            self.scheduler = start_scheduler(self.services)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def on_unmount(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
        self.loop_runner.close()
