"""Real fakes for tests: small classes that honour core's Protocols without a model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np

from core.embeddings import LocalE5Embedder
from core.errors import EmbedderError


class FixedClock:
    """A clock that only moves when a test moves it."""

    def __init__(self, moment: datetime):
        self.moment = moment

    def now(self) -> datetime:
        """The pinned time."""
        return self.moment

    def advance(self, **delta: float) -> None:
        """Move time forward, e.g. advance(days=3)."""
        self.moment += timedelta(**delta)


class HashEmbedder:
    """Deterministic bag-of-words embedder: each word is hashed into one of `dim` signed slots."""

    def __init__(self, name: str = "test:hashed-words", dim: int = 64):
        self.name = name
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dim
            vector[slot] += 1.0 if digest[4] % 2 else -1.0
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a query (same space as passages)."""
        return self._vector(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of passages."""
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def calibrate(self, similarity: float, kind: str = "query") -> float:
        """Plain cosine is already on a usable scale."""
        return float(min(1.0, max(0.0, similarity)))


class BrokenEmbedder:
    """The configured embedding model, failing: every embedding call raises EmbedderError."""

    def __init__(self, name: str = LocalE5Embedder.name, dim: int = LocalE5Embedder.dim):
        self.name = name
        self.dim = dim
        self.calls = 0

    def embed_query(self, text: str) -> np.ndarray:
        """Always fails, like a model that cannot load."""
        self.calls += 1
        raise EmbedderError("embedding model unavailable (test)")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Always fails, like a model that cannot load."""
        self.calls += 1
        raise EmbedderError("embedding model unavailable (test)")

    def calibrate(self, similarity: float, kind: str = "query") -> float:
        """Never reached: nothing gets embedded."""
        return similarity
