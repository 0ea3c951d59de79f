"""The embedded Chroma store broken three ways, through the real `elora` command line.

Each fault is made on a real home whose HNSW segment files were written to disk: the store
directory deleted, its segment files overwritten, its `chroma.sqlite3` replaced by garbage.
`doctor` must name the fault and the fix, `context --json` must still answer (degraded, from
full text), and `reindex` must rebuild everything from SQLite so that recall by meaning works
again.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.archive.records import CaptureIn
from core.config import load_settings
from core.memory.api import remember
from core.services import Services
from core.storage.db import run
from core.storage.vectors import COLLECTIONS, ChromaIndex

MOVE = "Je déménage à Lyon le 15 mai, le camion est réservé pour 8h"
FILLER = [
    "La facture d'électricité est arrivée, 84 euros ce mois-ci",
    "Rendez-vous chez le dentiste mardi à 14h",
    "Tu peux acheter du pain en rentrant ?",
    "Le match de foot est reporté à dimanche",
    "J'ai fini le livre que tu m'avais prêté",
    "Il pleut encore, je prends le bus",
]
LEXICAL_QUESTION = "Quand est-ce que je déménage à Lyon ?"
SEMANTIC_QUESTION = "Which city am I relocating to?"  # no word in common with MOVE
# Chroma writes HNSW segment files every `sync_threshold` vectors (1,000 by default): a small
# threshold puts real segment files on disk with a few dozen messages.
SMALL_SEGMENTS = {"hnsw:sync_threshold": 8, "hnsw:batch_size": 8}


def _elora(*args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("elora")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def _json(done: subprocess.CompletedProcess) -> dict:
    assert done.stdout.lstrip().startswith("{"), done.stdout[:200] + done.stderr[-2000:]
    return json.loads(done.stdout)


def _vectors_check(report: dict) -> dict:
    return next(c for c in report["checks"] if c["name"] == "vectors")


def _archive_texts(pack: dict) -> list[str]:
    return [
        item["text"]
        for layer in pack["layers"].values()
        for item in layer["items"]
        if item["source_type"] == "archive"
    ]


@pytest.fixture(autouse=True)
def embedded(home, monkeypatch):
    """These faults are the embedded store's (its files on disk): CI's reruns against a Chroma
    server keep this module's homes on embedded Chroma."""
    monkeypatch.delenv("ELORA_CHROMA_URL", raising=False)
    monkeypatch.delenv("ELORA_CHROMA_PREFIX", raising=False)


@pytest.fixture
def indexed_home(home, embedder):
    """A home with 30 archived messages, one memory entry and session memory, all indexed,
    HNSW segment files on disk and the store closed (as after a run of the bot)."""
    settings = load_settings()
    index = ChromaIndex(path=settings.chroma_dir, space_meta=SMALL_SEGMENTS)
    services = Services(settings, embedder=embedder, vectors=index)
    start = datetime(2024, 4, 1, 9, 0)
    texts = [MOVE] + [FILLER[n % len(FILLER)] + f" (n°{n})" for n in range(29)]
    for n, text in enumerate(texts):
        item = CaptureIn(
            surface="telegram",
            chat_id="42",
            message_id=str(n),
            text=text,
            sent_at=start + timedelta(hours=n),
        )
        assert services.archive.capture(item).indexed
    remember(services, "Je joue du violoncelle le mardi soir")
    services.session_memory.save("operator", "cli", "notes", "Liste des cartons: livres, vaisselle")
    assert services.vectorspace.health(refresh=True).ok
    index.close()
    services.close()
    segments = [p for p in settings.chroma_dir.glob("*/data_level0.bin") if p.stat().st_size]
    assert segments, "the archive's HNSW segment files should be on disk"
    return settings.chroma_dir


def _delete_store(chroma: Path) -> None:
    shutil.rmtree(chroma)


def _damage_segments(chroma: Path) -> None:
    noise = random.Random(7)
    for path in chroma.glob("*/*"):
        path.write_bytes(noise.randbytes(max(path.stat().st_size, 64)))


def _garbage_sqlite(chroma: Path) -> None:
    (chroma / "chroma.sqlite3").write_bytes(random.Random(8).randbytes(8192))


FAULTS = {
    "deleted": _delete_store,
    "damaged-hnsw": _damage_segments,
    "garbage-sqlite": _garbage_sqlite,
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_doctor_detects_recall_degrades_and_reindex_repairs(indexed_home, fault):
    chroma = indexed_home
    FAULTS[fault](chroma)

    doctor = _elora("doctor", "--json")
    report = _json(doctor)
    vectors = _vectors_check(report)
    assert doctor.returncode == 1
    assert not report["ok"] and not vectors["ok"]
    assert "run `elora reindex`" in vectors["detail"]
    archive = report["vectors"]["collections"]["archive"]
    assert archive["expected"] == 30
    assert archive["error"] or archive["vectors"] == 0
    assert "Traceback" not in doctor.stderr

    context = _elora("context", LEXICAL_QUESTION, "--json")
    pack = _json(context)
    assert context.returncode == 0, context.stderr[-2000:]
    assert pack["degraded"] is True
    assert "elora reindex" in pack["degraded_reason"]
    assert any("Lyon" in text for text in _archive_texts(pack))  # full text still answers
    assert "Traceback" not in context.stderr

    repair = _elora("reindex")
    assert repair.returncode == 0, repair.stdout + repair.stderr[-2000:]
    assert "reindexed 30 of 30 chunks, 1 of 1 memory entries and 1 of 1 session chunks" in (
        repair.stdout
    )
    moved = sorted(chroma.parent.glob("chroma.broken-*"))
    if fault == "deleted":  # nothing left to keep
        assert moved == []
    else:
        assert len(moved) == 1 and str(moved[0]) in repair.stdout
        assert (moved[0] / "chroma.sqlite3").exists()  # kept for inspection, not deleted

    after = _json(_elora("context", SEMANTIC_QUESTION, "--json"))
    assert after["degraded"] is False
    assert any(MOVE in text for text in _archive_texts(after))  # by meaning: vectors are back
    healed = _elora("doctor", "--json")
    assert _vectors_check(_json(healed))["ok"], healed.stdout
    assert healed.returncode == 0


def test_a_store_holding_far_fewer_vectors_than_sqlite_indexed_degrades_recall(
    indexed_home, embedder
):
    settings = load_settings()
    services = Services(settings, embedder=embedder)
    with services.db.session() as session:
        rows = run(session.connection(), "SELECT id FROM chunks LIMIT 10").all()
    ids = [r[0] for r in rows]
    services.vectors.delete("archive", ids)  # a third of the archive lost its vectors

    health = services.vectorspace.health(refresh=True)
    problem = health.recall_problem()

    assert health.collections["archive"].missing == 10
    assert problem and "archive holds 20 of 30 vectors" in problem and "reindex" in problem
    services.vectors.close()
    services.close()


def test_reindex_in_server_mode_moves_nothing_and_says_why_it_failed(indexed_home, monkeypatch):
    # Nothing listens on port 9: the server is unusable, and its files are not Elora's to move.
    monkeypatch.setenv("ELORA_CHROMA_URL", "http://127.0.0.1:9")
    before = sorted(p.name for p in indexed_home.parent.iterdir())

    repair = _elora("reindex")

    assert repair.returncode == 1
    lines = repair.stderr.strip().splitlines()
    assert lines[-1].startswith("elora: vector store at http://127.0.0.1:9")
    assert "Traceback" not in repair.stderr
    assert sorted(p.name for p in indexed_home.parent.iterdir()) == before
    assert os.listdir(indexed_home)  # the embedded store was not touched either


def test_every_collection_is_probed(indexed_home, embedder):
    services = Services(load_settings(), embedder=embedder)
    health = services.vectorspace.health(refresh=True)

    assert set(health.collections) == set(COLLECTIONS)
    assert {n: (c.vectors, c.expected) for n, c in health.collections.items()} == {
        "archive": (30, 30),
        "memory": (1, 1),
        "ephemeral": (1, 1),
        "turns": (30, 30),  # one vector per archived message (its turn key)
    }
    services.vectors.close()
    services.close()


class _BreakableIndex(ChromaIndex):
    """The real Chroma index whose chosen collections start failing the way a damaged HNSW
    segment does (chromadb's InternalError) once `broken` names them."""

    def __init__(self, path: Path):
        super().__init__(path=path)
        self.broken: set[str] = set()

    def collection(self, name: str):
        return _Breakable(super().collection(name), name, self)


class _Breakable:
    def __init__(self, real, name: str, index: _BreakableIndex):
        self._real, self._name, self._index = real, name, index

    def __getattr__(self, attr: str):
        if attr in ("query", "get") and self._name in self._index.broken:
            from chromadb.errors import InternalError

            def fail(*args, **kwargs):
                raise InternalError("Error executing plan: Error loading hnsw index")

            return fail
        return getattr(self._real, attr)


@pytest.mark.parametrize(
    ("exact_max", "call"),
    [(None, "get"), (0, "query")],  # a small archive's stored vectors; the index of a bigger one
)
def test_a_vector_search_failing_after_the_health_check_marks_the_pack_degraded(
    home, embedder, monkeypatch, exact_max, call
):
    from core.recall import archive_search
    from core.recall.pack import build_pack

    if exact_max is not None:
        monkeypatch.setattr(archive_search, "EXACT_MAX", exact_max)
    settings = load_settings()
    index = _BreakableIndex(settings.chroma_dir)
    services = Services(settings, embedder=embedder, vectors=index)
    for n, text in enumerate([MOVE, *FILLER]):
        item = CaptureIn(
            surface="telegram",
            chat_id="42",
            message_id=str(n),
            text=text,
            sent_at=datetime(2024, 4, 1, 9, n),
        )
        services.archive.capture(item)
    assert build_pack(services, LEXICAL_QUESTION).degraded is False  # health checked: fine
    index.broken.add("archive")  # the segment breaks while the verdict is still cached

    pack = build_pack(services, LEXICAL_QUESTION).to_json()

    assert pack["degraded"] is True
    assert f"archive: {call}" in pack["degraded_reason"]
    assert "Error loading hnsw index" in pack["degraded_reason"]
    assert any("Lyon" in text for text in _archive_texts(pack))  # full text still answers
    assert services.vectorspace.health().recall_problem()  # the next request knows at once
    services.close()
