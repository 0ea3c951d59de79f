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

from tests.cockpit.support import MODELS, add_proposal

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Tmux:
    """One tmux server of our own (private socket), one session, 120x36."""

    def __init__(self):
        self.socket = f"elora-test-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=30, check=True)  # fmt: skip
        return done.stdout

    def start(self, script: Path) -> None:
        self.pidfile = script.with_suffix(".pid")  # the launcher writes it, then execs elora
        self("new-session", "-d", "-s", "cockpit", "-x", "120", "-y", "36", str(script))
        self("set-option", "-t", "cockpit", "remain-on-exit", "on")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "cockpit")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self("send-keys", "-t", "cockpit", *(["-l"] if literal else []), *keys)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Poll the screen until `text` shows (or the program died); return the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if self.dead() or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed; the screen was:\n{screen}")
            time.sleep(0.2)

    def dead(self) -> bool:
        return self("display-message", "-p", "-t", "cockpit", "#{pane_dead}").strip() == "1"

    def exit_status(self, timeout: float = 30.0) -> int:
        """Wait for the program to end; its exit status (tmux fills it in just after)."""
        deadline = time.monotonic() + timeout
        while True:
            status = ""
            if self.dead():
                status = self("display-message", "-p", "-t", "cockpit", "#{pane_dead_status}")
            if status.strip():
                return int(status)
            if time.monotonic() > deadline:
                raise AssertionError(f"the cockpit did not exit:\n{self.stacks()}")
            time.sleep(0.2)

    def stacks(self) -> str:
        """Abort the stuck program: faulthandler prints every thread's stack in the pane."""
        tty = self("display-message", "-p", "-t", "cockpit", "#{pane_tty}").strip()
        held = subprocess.run(["ps", "-o", "pid,ppid,pgid,tpgid,stat,args", "-t",
                               tty.removeprefix("/dev/")], capture_output=True,
                              text=True).stdout  # fmt: skip
        pid = int(self.pidfile.read_text())
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            held += status[:60]
            ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid"))
            held += "\nparent: " + Path(f"/proc/{ppid}/cmdline").read_text().replace("\0", " ")
            held += "\n" + Path(f"/proc/{ppid}/status").read_text()[:80]
            held += "\nparent wchan: " + Path(f"/proc/{ppid}/wchan").read_text()
            held += "\nparent stack: " + Path(f"/proc/{ppid}/syscall").read_text()
        except OSError as exc:
            held += f"no /proc entry for {pid}: {exc}"
        for proc in Path("/proc").iterdir():
            try:
                if os.readlink(proc / "fd" / "0") == tty or os.readlink(proc / "fd" / "1") == tty:
                    held += f"\non the tty: {proc.name} " + (proc / "cmdline").read_text()
            except OSError:
                continue
        try:
            os.kill(pid, signal.SIGABRT)
        except ProcessLookupError:
            return f"elora has exited, yet the terminal is held by:\n{held}"
        deadline = time.monotonic() + 10
        while not self.dead() and time.monotonic() < deadline:
            time.sleep(0.2)
        shown = self("capture-pane", "-p", "-S", "-500", "-t", "cockpit")
        return f"processes on the terminal:\n{held}\nafter SIGABRT:\n{shown}"

    def kill(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def _launcher(tmp_path: Path, home: Path, base_url: str) -> Path:
    """A shell script starting `elora cockpit` with the test's settings and nothing else."""
    env = {
        "ELORA_HOME": str(home),
        "ELORA_LLM_API_BASE": base_url,
        "ELORA_LLM_API_KEY": "test-key-123456",
        "ELORA_LLM_RETRIES": "0",
        "ELORA_LEARNING_EXTRACTOR": "heuristic",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ANONYMIZED_TELEMETRY": "False",
        "OMP_WAIT_POLICY": "PASSIVE",
        "TERM": "xterm-256color",
        "PYTHONFAULTHANDLER": "1",  # a stuck run can be made to show its threads' stacks
        **{f"ELORA_MODEL_{tier}": f"openai/{name}" for tier, name in MODELS.items()},
    }
    elora = Path(sys.executable).parent / "elora"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    script = tmp_path / "cockpit.sh"
    # Something in the test process leaves COLUMNS=80 LINES=24 in the C environment that
    # children inherit; they would override the real terminal size.
    script.write_text(
        f"#!/bin/sh\nunset COLUMNS LINES\ncd {shlex.quote(str(tmp_path))}\n{exports}"
        f"echo $$ > cockpit.pid\nexec {elora} cockpit\n"
    )
    script.chmod(0o755)
    return script


def test_elora_cockpit_in_a_terminal_approves_browses_chats_and_quits(
    services, home, llm, tmp_path
):
    add_proposal(services, "p-term", "Camille prefers the window seat on trains")
    llm.default_text = "Réponse du modèle local."
    tmux = Tmux()
    try:
        tmux.start(_launcher(tmp_path, home, llm.base_url))
        screen = tmux.wait_for("open proposals: 1")
        assert "Camille prefers the window seat" in screen
        assert "a Approve" in screen and "? Help" in screen  # the footer

        tmux.keys("a")
        tmux.wait_for("open proposals: 0")
        assert services.proposals.get("p-term").status == "approved"

        tmux.keys("2")
        screen = tmux.wait_for("rows 1–1 of 1")
        assert "Camille prefers the window seat" in screen

        tmux.keys("3")
        tmux.wait_for("Message Elora")
        tmux.keys("Bonjour Elora", literal=True)
        tmux.keys("Enter")
        tmux.wait_for("Réponse du modèle local.")
        assert "Evidence pack" in tmux.screen()

        tmux.keys("Escape")  # leave the input, where q would be typed
        tmux.wait_for("i Type")  # (ESC and q sent together would read as alt+q)
        tmux.keys("q")
        assert tmux.exit_status() == 0
    finally:
        tmux.kill()
