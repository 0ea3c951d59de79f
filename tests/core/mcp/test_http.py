"""`elora mcp --http`: streamable HTTP on loopback behind a bearer token (ELORA_MCP_TOKEN)."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import threading

import httpx
import pytest

from core.cli.main import main
from core.mcp.auth import is_loopback
from tests.core.mcp.support import ELORA, STARTUP, TOOLS, result_json, server_env

TOKEN = "mcp-test-token-7f3a9c1e5b"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "curl", "version": "1"}},
}  # fmt: skip
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_http_without_a_token_refuses_to_start(home, capsys):
    assert main(["mcp", "--http"]) == 2

    err = capsys.readouterr().err
    assert err.startswith("elora: ELORA_MCP_TOKEN is not set: refusing to serve MCP over HTTP")


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "mcp.example.org"])
def test_http_refuses_a_non_loopback_bind_unless_allowed(home, monkeypatch, capsys, host):
    monkeypatch.setenv("ELORA_MCP_TOKEN", TOKEN)

    assert main(["mcp", "--http", "--host", host]) == 2

    assert "is not a loopback address" in capsys.readouterr().err


def test_http_on_a_busy_port_says_so_in_one_line(home, monkeypatch, capsys):
    monkeypatch.setenv("ELORA_MCP_TOKEN", TOKEN)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()

        assert main(["mcp", "--http", "--port", str(taken.getsockname()[1])]) == 2

    err = capsys.readouterr().err.strip()
    assert err.startswith("elora: cannot listen on 127.0.0.1:") and len(err.splitlines()) == 1


def test_loopback_addresses():
    assert all(map(is_loopback, ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.5", "example.org", ""]))


class HttpServer:
    """`elora mcp --http --port 0` in its own process; its stderr is read as it comes."""

    def __init__(self, home, cwd):
        env = {**os.environ, **server_env(home, MCP_TOKEN=TOKEN, LOG_LEVEL="DEBUG")}
        self.process = subprocess.Popen(
            [ELORA, "mcp", "--http", "--port", "0"], cwd=cwd, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def url(self) -> str:
        """Wait for the line announcing where it listens."""
        while True:
            line = self._lines.get(timeout=STARTUP)
            assert line is not None, "".join(self.stderr)[-3000:]
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                return found.group(1)

    def stop(self) -> int:
        """SIGTERM, as a service manager would; the exit code."""
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=STARTUP)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=STARTUP)
        return code


async def test_http_needs_the_bearer_token_and_serves_the_tools_with_it(home, tmp_path):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    server = HttpServer(home, tmp_path)
    try:
        url = server.url()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        anonymous = httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS, timeout=STARTUP)
        wrong = httpx.post(url, json=INITIALIZE, timeout=STARTUP,
                           headers={**MCP_HEADERS, "Authorization": "Bearer not-the-token"})  # fmt: skip
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            listed = await client.list_tools()
            found = result_json(await client.call_tool("search", {"query": "vélo"}))
            pack = result_json(await client.call_tool("context", {"question": "Où est mon vélo ?"}))
    finally:
        code = server.stop()

    assert anonymous.status_code == 401 and wrong.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert {t.name for t in listed.tools} == TOOLS
    assert found["items"] == [] and pack["version"] == 1
    assert code == 0
    log = "".join(server.stderr)
    assert TOKEN not in log  # not even at DEBUG
