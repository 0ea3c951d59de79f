"""Driving the real `elora mcp` process: its environment, the CLI beside it, a small export,
an `mcp` client session over stdio, and raw JSON-RPC lines for checking the wire itself."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.core.importers.helpers import tg_chat, tg_export, tg_message

ELORA = str(Path(sys.executable).with_name("elora"))
STARTUP = 180.0  # a cold process on a busy 2-core machine imports the SDK and loads e5
OFFLINE = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "OMP_WAIT_POLICY": "PASSIVE",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
}
MOVE = "Je déménage à Lyon le 18 mai, le camion est réservé pour 8h"
TOOLS = {"context", "search", "remember", "forget", "proposals_list", "proposals_approve"}


def server_env(home: Path, **settings: str) -> dict[str, str]:
    """Offline variables, ELORA_HOME and extra ELORA_* settings (`DIRECT_WRITES="true"`)."""
    env = {**OFFLINE, "ELORA_HOME": str(home)}
    env.update({f"ELORA_{key}": value for key, value in settings.items()})
    return env


def cli(home: Path, *args: str, **settings: str) -> Any:
    """Run `elora ARGS` in its own process; parse stdout as JSON when `--json` was passed."""
    done = subprocess.run(
        [ELORA, *args], capture_output=True, text=True, cwd=home.parent, timeout=STARTUP,
        env={**os.environ, **server_env(home, **settings)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout) if "--json" in args else done.stdout


def import_small_export(home: Path) -> None:
    """A Telegram chat with a known message, imported through `elora import`."""
    messages = [
        tg_message(1, "Coucou, tu fais quoi ce week-end ?", sender="Léa Martin"),
        tg_message(2, MOVE, sender="Camille Martin", from_id="user5012345678"),
        tg_message(3, "Super, je viendrai aider avec les cartons", sender="Léa Martin"),
    ]
    path = home.parent / "result.json"
    path.write_text(json.dumps(tg_export(tg_chat(77, messages))), encoding="utf-8")
    report = cli(home, "import", str(path), "--json")
    assert report["stored"] == 3, report


@asynccontextmanager
async def stdio_client(home: Path, errlog, **settings: str):
    """An initialised `mcp` client talking to a fresh `elora mcp` process over stdio."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.stdio import stdio_client as stdio_transport

    params = StdioServerParameters(
        command=ELORA, args=["mcp"], env=server_env(home, **settings), cwd=str(home.parent)
    )
    # The server's stderr (its logs) goes to `errlog`, a real file, not pytest's capture.
    transport = stdio_transport(params, errlog=errlog)
    async with Client(transport, read_timeout_seconds=STARTUP) as client:
        yield client


def result_json(result) -> Any:
    """A tool result's structured content; a tool error fails the test with its message."""
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    """The message of a tool error."""
    assert result.is_error, result.structured_content
    return " ".join(c.text for c in result.content)


class RawServer:
    """A server process spoken to in raw JSON-RPC lines, every stdout line kept for checks."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, errlog):
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, cwd=cwd,
            env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **env},
        )  # fmt: skip
        self.lines: list[bytes] = []
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False):
        """Send a request (or a notification); return the request id."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self._next_id += 1
            message["id"] = self._next_id
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return message.get("id")

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and wait for its response (every line read must be JSON-RPC)."""
        wanted = self.send(method, params)
        while True:
            line = self._queue.get(timeout=STARTUP)
            assert line is not None, "the server closed stdout before answering"
            message = json.loads(line)  # a banner or log line on stdout fails right here
            assert message.get("jsonrpc") == "2.0", line
            if message.get("id") == wanted:
                return message

    def initialize(self) -> dict[str, Any]:
        """The handshake most clients use today."""
        response = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "raw-test", "version": "1"}},
        )  # fmt: skip
        self.send("notifications/initialized", notify=True)
        return response

    def close(self) -> int:
        """Close stdin (the end of the session), wait for the exit code and the last lines."""
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=STARTUP)
            self._reader.join(timeout=STARTUP)
            return code
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
