"""One-time confirmation tokens for forgetting through MCP: a first call previews and gets a
token bound to that memory; only a second call carrying it forgets."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.clock import Clock
from core.errors import InvalidInput

TOKEN_SECONDS = 120


@dataclass(frozen=True)
class _Pending:
    memory_id: str
    with_sources: bool
    expires_at: datetime


class ForgetConfirmations:
    """Tokens live in this process only (never on disk), expire quickly and work once."""

    def __init__(self, clock: Clock, seconds: int = TOKEN_SECONDS):
        self.clock = clock
        self.ttl = timedelta(seconds=seconds)
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()  # tools run in worker threads

    def issue(self, memory_id: str, with_sources: bool) -> tuple[str, datetime]:
        """A fresh token for forgetting exactly this memory (and its sources, if asked)."""
        now = self.clock.now()
        token = secrets.token_urlsafe(18)
        with self._lock:
            self._pending = {t: p for t, p in self._pending.items() if p.expires_at > now}
            self._pending[token] = _Pending(memory_id, with_sources, now + self.ttl)
        return token, now + self.ttl

    def redeem(self, token: str, memory_id: str, with_sources: bool) -> None:
        """Consume the token; InvalidInput unless it is known, unexpired and for this very forget."""
        with self._lock:
            pending = self._pending.pop(token, None)  # one attempt per token, right or wrong
        if pending is None:
            raise InvalidInput(
                "unknown or already used confirmation token; call forget without one to preview"
            )
        if pending.expires_at <= self.clock.now():
            raise InvalidInput("the confirmation token expired; call forget again to preview")
        if pending.memory_id != memory_id or pending.with_sources != with_sources:
            raise InvalidInput(
                "the confirmation token was issued for another forget; call forget again to preview"
            )
