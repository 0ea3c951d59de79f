"""The real `elora cockpit` in a real terminal: tmux runs it in a pseudo-terminal (scheduler
on, as a user would start it), the test types keys and reads the screen back."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.cockpit.support import LLM_KEY, add_proposal
from tests.llm_server import model_env
from tests.waiting import wait_until

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """`elora cockpit` in a 120x36 tmux pane, on a tmux server of our own (private socket).

    The launcher shell waits for elora and writes its exit status to a file: the test reads
    that rather than tmux's pane state (tmux 3.3 sometimes leaves an exited pane process
    unreaped for a long while)."""

    def __init__(self, workdir: Path, env: dict[str, str]):
        self.socket = f"elora-test-{uuid.uuid4().hex[:8]}"
        self.socket_path: Path | None = None
        self.status_file = workdir / "cockpit.status"
        self.script = workdir / "cockpit.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        elora = Path(sys.executable).parent / "elora"
        # Something in the test process leaves COLUMNS=80 LINES=24 in the C environment that
        # children inherit: they would override the real size of the terminal.
        self.script.write_text(
            f"#!/bin/sh\nunset COLUMNS LINES\ncd {shlex.quote(str(workdir))}\n{exports}"
            f"{elora} cockpit\necho $? > {shlex.quote(str(self.status_file))}\n"
        )
        self.script.chmod(0o755)

    def tmux(self, *args: str) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=30, check=True)  # fmt: skip
        return done.stdout

    def start(self) -> None:
        self.tmux("new-session", "-d", "-s", "cockpit", "-x", "120", "-y", "36", str(self.script))
        self.socket_path = Path(self.tmux("display-message", "-p", "#{socket_path}").strip())

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "cockpit")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "cockpit", *(["-l"] if literal else []), *keys)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Poll the screen until `text` shows; return the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if self.status_file.exists() or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed; the screen was:\n{screen}")
            time.sleep(0.2)

    def exit_status(self, timeout: float = 30.0) -> int:
        """Wait for elora to end; its exit status."""
        deadline = time.monotonic() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().strip():
            if time.monotonic() > deadline:
                raise AssertionError(f"the cockpit did not exit:\n{self.stacks()}")
            time.sleep(0.2)
        return int(self.status_file.read_text())

    def stacks(self) -> str:
        """Abort the stuck elora: with PYTHONFAULTHANDLER it prints every thread's stack."""
        for proc in Path("/proc").iterdir():
            try:
                if (proc / "comm").read_text().strip() == "elora" and str(self.script) in (
                    Path(f"/proc/{self.parent(proc)}/cmdline").read_text()
                ):
                    os.kill(int(proc.name), signal.SIGABRT)
            except (OSError, ValueError):
                continue
        time.sleep(2)
        return self.tmux("capture-pane", "-p", "-S", "-300", "-t", "cockpit")

    @staticmethod
    def parent(proc: Path) -> str:
        status = (proc / "status").read_text()
        return next(line.split()[1] for line in status.splitlines() if line.startswith("PPid"))

    def kill(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
        if self.socket_path is not None:
            self.socket_path.unlink(missing_ok=True)  # tmux leaves it behind


def test_elora_cockpit_in_a_terminal_approves_browses_chats_and_quits(
    services, home, llm, tmp_path
):
    add_proposal(services, "p-term", "Camille prefers the window seat on trains")
    llm.default_text = "Réponse du modèle local."
    terminal = Terminal(tmp_path, {
        "ELORA_HOME": str(home),
        **model_env(llm.base_url, key=LLM_KEY),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ANONYMIZED_TELEMETRY": "False",
        "OMP_WAIT_POLICY": "PASSIVE",
        "TERM": "xterm-256color",
        "PYTHONFAULTHANDLER": "1",  # a stuck run can be made to show its threads' stacks
    })  # fmt: skip
    try:
        terminal.start()
        screen = terminal.wait_for("open proposals: 1")
        assert "Camille prefers the window seat" in screen
        assert "a Approve" in screen and "? Help" in screen  # the footer

        terminal.keys("a")
        # The decision is written in the cockpit's worker; wait for it to be stored, then for
        # the screen to catch up (a reload in between still lists it, as open).
        wait_until(lambda: services.proposals.get("p-term").status == "approved",
                   "the approval stored")  # fmt: skip
        terminal.wait_for("open proposals: 0")

        terminal.keys("2")
        screen = terminal.wait_for("rows 1–1 of 1")
        assert "Camille prefers the window seat" in screen

        terminal.keys("3")
        terminal.wait_for("Message Elora")
        terminal.keys("Bonjour Elora", literal=True)
        terminal.keys("Enter")
        terminal.wait_for("Réponse du modèle local.")
        assert "Evidence pack" in terminal.screen()

        terminal.keys("Escape")  # leave the input, where q would be typed
        terminal.wait_for("i Type")  # (ESC and q sent together would read as alt+q)
        terminal.keys("q")
        assert terminal.exit_status() == 0
    finally:
        terminal.kill()
