"""`--json` prints exactly one JSON document on stdout, whatever a library prints meanwhile."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed on exit: nothing listens there


def _elora(*args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("elora")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture
def dead_embedder(home, monkeypatch):
    """A LiteLLM embedding model behind a local port where nothing answers."""
    monkeypatch.setenv("ELORA_EMBEDDER", "openai/text-embedding-3-small")
    monkeypatch.setenv("ELORA_EMBEDDER_API_BASE", f"http://127.0.0.1:{_dead_port()}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (("context", "Quand est-ce que je déménage à Lyon ?", "--json"), "degraded"),
        (("doctor", "--json"), "checks"),
    ],
)
def test_json_stays_one_document_when_the_embedding_model_is_unreachable(dead_embedder, args, key):
    done = _elora(*args)

    document = json.loads(done.stdout)  # fails on LiteLLM's "Give Feedback" banner
    assert key in document
    assert "Traceback" not in done.stderr
    if args[0] == "context":
        assert document["degraded"] is True
        assert "embeddings unavailable" in document["degraded_reason"]
    else:
        embedder = next(c for c in document["checks"] if c["name"] == "embedder")
        assert not embedder["ok"]


# A command body that prints the way libraries do: Python prints to sys.stdout, native code
# writes straight to file descriptor 1, then the command prints its document.
_NOISY = """
import os, sys
from core.cli.context import document_stdout, print_json

with document_stdout():
    print("Give Feedback / Get Help: https://github.com/BerriAI/litellm/issues/new")
    sys.stdout.flush()
    os.write(1, b"native library chatter\\n")
    print_json({"answer": 42, "text": "déménagement"})
    print("late noise from a library")
print("after the command: stdout is stdout again")
"""


def test_everything_but_the_document_goes_to_stderr_python_and_native_alike(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _NOISY], capture_output=True, text=True, cwd=tmp_path, check=True
    )

    document, _, rest = done.stdout.partition("}\n")
    assert json.loads(document + "}") == {"answer": 42, "text": "déménagement"}
    assert rest == "after the command: stdout is stdout again\n"
    for noise in ("Give Feedback", "native library chatter", "late noise"):
        assert noise in done.stderr
