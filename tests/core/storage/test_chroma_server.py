import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest

from core.archive.records import CaptureIn
from core.config import load_settings
from core.services import Services
from core.storage.db import run

STARTUP_SECONDS = 60


def _chroma_executable() -> str:
    sibling = Path(sys.executable).with_name("chroma")
    found = str(sibling) if sibling.exists() else shutil.which("chroma")
    assert found, "the `chroma` script of chromadb is not installed"
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _heartbeat(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _wait_until_up(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while not _heartbeat(url):
        assert time.monotonic() < deadline, "chroma server did not answer its heartbeat"
        try:  # wait a little, but notice at once if the server died
            code = server.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"chroma server exited with {code}: {log.read_text()}")


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@pytest.fixture
def chroma_server(tmp_path):
    """chromadb's own server on a free loopback port, stopped after the test."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [_chroma_executable(), "run", "--path", str(tmp_path / "server-data")]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    log_path = tmp_path / "chroma.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(server, url, log_path)
            yield url
        finally:
            _stop(server)


def test_captures_are_indexed_on_a_chroma_server_and_found_by_meaning(
    chroma_server, home, embedder, monkeypatch
):
    monkeypatch.setenv("ELORA_CHROMA_URL", chroma_server)
    monkeypatch.setenv("ELORA_CHROMA_PREFIX", "server-test-")
    settings = load_settings()
    services = Services(settings, embedder=embedder)
    texts = [
        "Je déménage à Lyon en mai",
        "La facture d'électricité est arrivée",
        "Rendez-vous chez le dentiste mardi à 14h",
    ]

    for n, text in enumerate(texts):
        result = services.archive.capture(
            CaptureIn(
                surface="telegram",
                chat_id="42",
                message_id=str(n),
                text=text,
                sent_at=datetime(2024, 5, 1, 9, n),
            )
        )
        assert result.indexed

    hits = services.vectorspace.query("archive", "where am I moving to?", 1)
    with services.db.session() as session:
        top = run(session.connection(), "SELECT text FROM chunks WHERE id = ?", (hits[0].id,))
        assert "déménage" in top.scalar_one()
    assert services.vectors.count("archive") == 3
    assert not settings.chroma_dir.exists()  # nothing went to an embedded store
    services.close()

    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=int(chroma_server.rsplit(":", 1)[1]))
    assert client.get_collection("server-test-archive").count() == 3


def test_reindex_on_a_server_refills_missing_vectors_and_writes_nothing_under_home(
    chroma_server, home, embedder, monkeypatch, capsys
):
    from core.cli.main import main

    monkeypatch.setenv("ELORA_CHROMA_URL", chroma_server)
    monkeypatch.setenv("ELORA_CHROMA_PREFIX", "reindex-test-")
    services = Services(load_settings(), embedder=embedder)
    for n, text in enumerate(["Je déménage à Lyon en mai", "Le dentiste mardi", "Il pleut"]):
        item = CaptureIn(
            surface="telegram",
            chat_id="42",
            message_id=str(n),
            text=text,
            sent_at=datetime(2024, 5, 1, 9, n),
        )
        assert services.archive.capture(item).indexed
    with services.db.session() as session:
        ids = [r[0] for r in run(session.connection(), "SELECT id FROM chunks").all()]
    services.vectors.delete("archive", ids[:2])
    health = services.vectorspace.health(refresh=True)
    assert health.collections["archive"].missing == 2
    assert "archive holds 1 of 3 vectors" in health.recall_problem()
    services.close()

    assert main(["reindex"]) == 0

    assert "reindexed 3 of 3 chunks" in capsys.readouterr().out
    assert not [p.name for p in home.iterdir() if p.name.startswith("chroma")]
    services = Services(load_settings(), embedder=embedder)
    assert services.vectorspace.health(refresh=True).ok
    assert services.vectors.count("archive") == 3
    services.close()
