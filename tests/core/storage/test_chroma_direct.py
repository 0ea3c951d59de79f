"""The embedded Chroma store used through Chroma's engine directly: the same vectors as the full
client sees, and one-shot commands that never import the chromadb package."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from core.storage.chroma_direct import DirectChroma
from core.storage.vectors import ChromaIndex

CHECK = (
    "import sys\n"
    "from core.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print('chromadb imported:', 'chromadb' in sys.modules, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def unit(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).normal(size=16)
    return (vector / np.linalg.norm(vector)).tolist()


READ_BACK = (
    "import sys\n"
    "from pathlib import Path\n"
    "from core.storage.vectors import ChromaIndex\n"
    "index = ChromaIndex(path=Path(sys.argv[1]))\n"
    "print(index.count('memory'), index.query('memory', [float(x) for x in sys.argv[2:]], 1)[0].id)\n"
)


@pytest.fixture
def store(tmp_path):
    """A store created by the full client (as another process would), with one vector."""
    from chromadb.api.shared_system_client import SharedSystemClient

    client = ChromaIndex(path=tmp_path / "chroma")
    client.upsert("memory", ["a"], [unit(1)], [{"tier": "semantic"}])
    SharedSystemClient.clear_system_cache()  # this process lets go of it
    return tmp_path / "chroma"


def test_direct_calls_and_the_full_client_see_the_same_vectors(store):
    direct = DirectChroma(ChromaIndex(path=store))

    direct.upsert("memory", ["b"], [unit(2)], [{"tier": "episodic"}])
    hits = direct.query("memory", unit(2), 2)
    direct.delete("memory", ["a"])

    assert direct.direct  # all of it through Chroma's engine, no client
    assert [h.id for h in hits] == ["b", "a"] and hits[0].metadata == {"tier": "episodic"}
    assert direct.count("archive") == 0  # a collection never created reads as empty
    assert direct.get_vectors("memory", ["b", "zz"]).keys() == {"b"}
    client = subprocess.run(  # the full client, in its own process, sees the same
        [sys.executable, "-c", READ_BACK, str(store), *map(str, unit(2))],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert client.stdout.split() == ["1", "b"], client.stderr


@pytest.mark.parametrize("direct", [True, False], ids=["engine", "client"])
def test_a_query_among_ids_searches_them_only_and_an_unknown_id_gives_way_to_the_filter(
    store, direct
):
    index = ChromaIndex(path=store)
    vectors = DirectChroma(index) if direct else index
    vectors.upsert(
        "memory", ["b", "c", "d"], [unit(2), unit(3), unit(4)],
        [{"tier": "episodic"}, {"tier": "semantic"}, {"tier": "semantic"}],
    )  # fmt: skip
    where = {"tier": "semantic"}

    among = vectors.query("memory", unit(3), 5, where, metadata=False, among=["c", "d"])
    # "zz" is in no collection (not indexed yet, or forgotten meanwhile): `where` decides.
    refused = vectors.query("memory", unit(3), 5, where, metadata=False, among=["c", "zz"])

    assert [h.id for h in among] == ["c", "d"]
    assert [h.id for h in refused] == [h.id for h in vectors.query("memory", unit(3), 5, where)]
    assert {h.id for h in refused} == {"a", "c", "d"}
    assert index.failure is None  # a refused id is no store failure
    assert vectors.query("memory", unit(3), 5, where, among=[]) == []


def test_a_new_collection_is_created_by_the_client_then_used_through_it(store):
    direct = DirectChroma(ChromaIndex(path=store))

    direct.upsert("archive", ["c"], [unit(3)], [{"chat_id": "42"}])

    assert direct.count("archive") == 1
    assert direct.query("archive", unit(3), 1, {"chat_id": "42"})[0].id == "c"
    assert not direct.direct


@pytest.fixture
def embedded(home, monkeypatch):
    """This home's vectors in embedded Chroma, even in CI's reruns against a Chroma server
    (a server is reached through the chromadb client: the case below is the embedded one)."""
    monkeypatch.delenv("ELORA_CHROMA_URL", raising=False)
    monkeypatch.delenv("ELORA_CHROMA_PREFIX", raising=False)


def test_one_shot_commands_read_and_write_vectors_without_importing_chromadb(
    embedded, services, home
):
    from core.memory.api import remember

    remember(services, "Le vélo est au garage")  # creates the store (the client's job)
    services.close()
    env = {**os.environ, "ELORA_HOME": str(home)}

    for args in (
        ["context", "Où est le vélo ?", "--json"],
        ["memories", "--search", "vélo", "--json"],
        ["remember", "Le casque est dans l'entrée"],
    ):
        done = subprocess.run(
            [sys.executable, "-c", CHECK, *args], env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "chromadb imported: False" in done.stderr, (args, done.stderr[-2000:])
    found = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "memories", "--search", "casque", "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Le casque est dans l'entrée" in found.stdout


def test_once_the_client_has_the_store_every_call_stays_with_the_client(tmp_path):
    direct = DirectChroma(ChromaIndex(path=tmp_path / "chroma"))

    assert direct.count("archive") == 0  # a fresh home: the client creates the store
    direct.upsert("archive", ["a"], [unit(1)], [{"chat_id": "42"}])
    direct.upsert("ephemeral", ["s"], [unit(2)], [{"chat_id": "42"}])
    direct.delete("ephemeral", ["s"])

    assert [h.id for h in direct.query("archive", unit(1), 1)] == ["a"]
    assert direct.count("ephemeral") == 0


def _unreplayed(store, name: str) -> int:
    """Log records of a collection its saved HNSW index does not hold yet: what every process
    opening the store inserts into the index again before its first query."""
    import sqlite3

    with sqlite3.connect(store / "chroma.sqlite3") as db:
        (collection,) = db.execute("SELECT id FROM collections WHERE name = ?", (name,)).fetchone()
        saved = db.execute(
            "SELECT COALESCE(MAX(m.seq_id), 0) FROM segments s LEFT JOIN max_seq_id m "
            "ON m.segment_id = s.id WHERE s.collection = ? AND s.scope = 'VECTOR'",
            (collection,),
        ).fetchone()[0]
        (waiting,) = db.execute(
            "SELECT COUNT(*) FROM embeddings_queue WHERE topic LIKE ? AND seq_id > ?",
            (f"%{collection}", saved),
        ).fetchone()
    return waiting


def test_new_collections_save_their_index_every_sync_threshold_vectors(tmp_path):
    from core.storage.vectors import SYNC_THRESHOLD

    index = ChromaIndex(path=tmp_path / "chroma")
    index.upsert("turns", ["a"], [unit(1)], [{"chat_id": "42"}])

    assert index.collection("turns").configuration_json["hnsw"]["sync_threshold"] == (
        SYNC_THRESHOLD
    )


def test_a_store_made_with_chromas_default_threshold_stops_replaying_its_log(tmp_path):
    # Homes made before SYNC_THRESHOLD hold up to 999 vectors per collection in Chroma's log
    # only, inserted into the index again by every process (most of a one-shot's second).
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient

    from core.storage.vectors import SYNC_THRESHOLD

    store = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(store))
    old = client.create_collection("turns", metadata={"hnsw:space": "cosine"})
    count = SYNC_THRESHOLD + 50
    for start in range(0, count, 50):
        ids = [str(n) for n in range(start, start + 50)]
        old.upsert(ids=ids, embeddings=[unit(int(i)) for i in ids])
    SharedSystemClient.clear_system_cache()
    assert _unreplayed(store, "turns") == count

    direct = DirectChroma(ChromaIndex(path=store))
    hits = direct.query("turns", unit(7), 1, metadata=False)

    assert [h.id for h in hits] == ["7"]  # the replayed log is searched
    assert _unreplayed(store, "turns") == 0  # and saved: the next process replays nothing
    assert direct.direct


def test_after_the_hand_over_everyday_calls_skip_the_clients_python_layer(tmp_path):
    # A fresh home's collections are the client's to create; from then on queries, counts and
    # upserts go to the engine inside the client (one view of the files) and agree with it.
    direct = DirectChroma(ChromaIndex(path=tmp_path / "chroma"))
    direct.upsert("archive", ["a", "b"], [unit(1), unit(2)], [{"chat_id": "42"}, {"chat_id": "7"}])
    col = direct.index.collection("archive")
    calls = []
    for name in ("query", "count", "upsert"):
        setattr(col, name, lambda *a, _n=name, **k: calls.append(_n))  # the client's layer

    direct.upsert("archive", ["c"], [unit(3)], [{"chat_id": "42"}])
    hits = direct.query("archive", unit(3), 2, {"chat_id": "42"})

    assert [h.id for h in hits] == ["c", "a"] and hits[0].metadata == {"chat_id": "42"}
    assert direct.count("archive") == 3
    assert calls == []
    assert direct.index.client.get_collection("archive").count() == 3  # the client agrees
