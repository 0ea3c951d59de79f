"""In stdio mode stdout is the protocol channel: only JSON-RPC lines may ever appear on it,
whatever libraries load or print while the server runs, and logs go to stderr."""

from __future__ import annotations

import json
import sys

from tests.core.mcp.support import ELORA, RawServer, server_env

# The real server plus one tool that writes to stdout in every way a library can, and a late
# writer at exit; everything must end up on stderr.
NOISY_SERVER = """
import atexit, os, subprocess, sys
from core.cli.context import services
from core.mcp.server import build_server, run_stdio
from core.mcp.tools import MemoryTools

server = build_server(MemoryTools(services()))

@server.tool()
def noisy() -> str:
    print("BANNER print")
    sys.stdout.write("BANNER sys.stdout\\n")
    sys.stdout.flush()
    os.write(1, b"BANNER fd1\\n")
    subprocess.run(["echo", "BANNER child"], check=True)
    return "done"

atexit.register(lambda: print("BANNER atexit", flush=True))
run_stdio(server)
"""


def assert_only_jsonrpc(lines: list[bytes]) -> None:
    assert lines, "the server wrote nothing at all"
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line


def test_stdout_carries_only_protocol_while_litellm_and_chroma_load(home, tmp_path, llm_server):
    env = server_env(
        home, EMBEDDER="openai/fake-embed", EMBEDDER_API_BASE=llm_server.base_url,
        LOG_LEVEL="DEBUG",
    )  # fmt: skip
    env.update(OPENAI_API_KEY="test-key", LITELLM_LOG="DEBUG")
    log = tmp_path / "server.log"
    with log.open("wb") as errlog:
        server = RawServer([ELORA, "mcp"], env, tmp_path, errlog)
        try:
            server.initialize()
            listed = server.request("tools/list")
            pack = server.request(
                "tools/call", {"name": "context", "arguments": {"question": "Où est mon vélo ?"}}
            )
            search = server.request(
                "tools/call", {"name": "search", "arguments": {"query": "vélo"}}
            )
        finally:
            code = server.close()

    assert code == 0
    assert_only_jsonrpc(server.lines)
    assert len(listed["result"]["tools"]) == 6
    structured = pack["result"]["structuredContent"]
    # Not degraded: the query was embedded through LiteLLM and searched in Chroma, in-process.
    assert structured["degraded"] is False, structured["degraded_reason"]
    assert search["result"]["isError"] is False
    assert "DEBUG" in log.read_text(errors="replace")  # the logs did flow, to stderr


def test_whatever_writes_to_stdout_during_and_after_serving_goes_to_stderr(home, tmp_path):
    log = tmp_path / "server.log"
    with log.open("wb") as errlog:
        server = RawServer([sys.executable, "-c", NOISY_SERVER], server_env(home), tmp_path, errlog)
        try:
            server.initialize()
            noisy = server.request("tools/call", {"name": "noisy", "arguments": {}})
            after = server.request("tools/call", {"name": "proposals_list", "arguments": {}})
        finally:
            code = server.close()

    assert code == 0
    assert_only_jsonrpc(server.lines)
    assert noisy["result"]["content"][0]["text"] == "done"
    assert after["result"]["isError"] is False
    stderr = log.read_text(errors="replace")
    for banner in ("print", "sys.stdout", "fd1", "child", "atexit"):
        assert f"BANNER {banner}" in stderr, banner
