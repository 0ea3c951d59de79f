"""Real fakes for tests: small classes that honour core's Protocols (clock, embedder, model
client) without a model or a network."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from core.embeddings import LocalE5Embedder
from core.errors import EmbedderError, ProviderError
from core.routing.client import CALLS, Completion


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


class ScriptedModel:
    """An in-process model client (core.routing.client.ModelClient) for tests where HTTP is not
    the point: replies come from a queue (`enqueue`), every call is logged (`history`), and each
    call is recorded in the request's trace like a real one (no cost: a local model's)."""

    def __init__(self, *replies: str | Completion, context: int = 8192):
        self.replies: list[str | Completion] = list(replies)
        self.history: list[dict[str, Any]] = []
        self.context = context

    def enqueue(self, *replies: str | Completion) -> None:
        """Queue replies (text, or a whole Completion with tool calls)."""
        self.replies.extend(replies)

    async def complete(
        self,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """The next scripted reply as the tier's answer; ProviderError when none is left."""
        self.history.append({"tier": tier, "messages": messages, "tools": tools})
        if not self.replies:
            raise ProviderError(f"the {tier} model is unavailable right now (no scripted reply)")
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            reply = Completion(tier=tier, model=f"scripted-{tier.lower()}", text=reply,
                               tool_calls=[], tokens_in=50, tokens_out=10, cost=None,
                               latency_ms=1)  # fmt: skip
        reply.tools_offered = bool(tools)
        sink = CALLS.get()
        if sink is not None:
            sink.append(reply.record())
        return reply

    async def complete_text(self, tier: str, messages: list[dict[str, Any]]) -> str:
        """The next scripted reply's text."""
        return (await self.complete(tier, messages)).text or ""

    def context_tokens(self, tier: str) -> int:
        """The context size every tier has here."""
        return self.context

    def prompts(self) -> list[str]:
        """The last user message of every call, in order."""
        return [
            next((m["content"] for m in reversed(call["messages"]) if m["role"] == "user"), "")
            for call in self.history
        ]
