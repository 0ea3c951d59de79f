"""The per-chat conversation window, persisted in SQLite so a restart loses nothing.

When the window grows past a share (~30 %) of the model's context, its older half is distilled:
the raw turns go to session memory (searchable with search_session_context) and a short
summary stays in the window, so nothing is silently dropped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sqlmodel import select

from core.errors import EloraError
from core.recall.tokens import count_tokens
from core.storage.models import Thread

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)


def window_id(surface: str, chat_id: str) -> str:
    """The thread id of a chat's window."""
    return f"window:{surface}:{chat_id}"


class ConversationWindow:
    """Recent turns of one chat, with a summary of what was distilled away."""

    def __init__(self, services: Services, surface: str, chat_id: str, user_id: str | None = None):
        self.services = services
        self.surface = surface
        self.chat_id = str(chat_id)
        self.user_id = str(user_id) if user_id is not None else ""
        self.id = window_id(surface, self.chat_id)

    def _load(self, session) -> Thread:
        row = session.exec(select(Thread).where(Thread.id == self.id)).first()
        if row is None:
            now = self.services.clock.now()
            row = Thread(id=self.id, kind="window", chat_id=self.chat_id, messages=[],
                         created_at=now, updated_at=now)  # fmt: skip
        return row

    def load(self) -> tuple[list[dict[str, Any]], str | None]:
        """The turns (oldest first) and the summary of distilled turns, in one read."""
        with self.services.db.session() as session:
            row = self._load(session)
            return list(row.messages), row.summary

    def turns(self) -> list[dict[str, Any]]:
        """The turns currently in the window, oldest first."""
        return self.load()[0]

    def summary(self) -> str | None:
        """The summary of distilled turns, if any."""
        return self.load()[1]

    def append(self, role: str, content: str, capture_id: str | None = None) -> None:
        """Add one turn and persist it."""
        self.extend([(role, content, capture_id)])

    def extend(self, turns: list[tuple[str, str, str | None]]) -> None:
        """Add turns (role, content, capture id) in one write."""
        now = self.services.clock.now()
        with self.services.db.session(write=True) as session:
            row = self._load(session)
            row.messages = [
                *row.messages,
                *({"role": role, "content": content, "capture_id": capture_id,
                   "at": now.isoformat()} for role, content, capture_id in turns),
            ]  # fmt: skip
            row.updated_at = now
            session.add(row)

    def reset(self) -> None:
        """Start over (e.g. /new): the window and its summary are cleared."""
        with self.services.db.session(write=True) as session:
            row = self._load(session)
            row.messages, row.summary = [], None
            row.updated_at = self.services.clock.now()
            session.add(row)

    def tokens(self) -> int:
        """Estimated tokens of the window and its summary."""
        return _tokens(*self.load())

    def messages(self) -> list[dict[str, str]]:
        """The window as chat messages for the model."""
        return as_messages(self.turns())

    async def compact(self, context_tokens: int, share: float, model=None) -> bool:
        """Distil the older half into session memory when the window passes `share` of context.

        Its database and embedding work runs off the event loop (the model call stays on it).
        """
        from core.offload import run_blocking

        turns, summary = await run_blocking(self.load)
        if not needs_compaction(turns, summary, context_tokens, share):
            return False
        half = max(1, len(turns) // 2)
        older, newer = turns[:half], turns[half:]
        source = f"conversation:{self.chat_id}"
        raw = "\n\n".join(f"{t['role']} ({t.get('at', '')[:16]}): {t['content']}" for t in older)
        await run_blocking(
            self.services.session_memory.save, self.user_id, self.chat_id, source, raw
        )
        digest = await self._distil(older, model)
        await run_blocking(self._keep, newer, digest)
        log.info("window %s: %d turns distilled into session memory", self.id, len(older))
        return True

    def _keep(self, newer: list[dict[str, Any]], digest: str) -> None:
        with self.services.db.session(write=True) as session:
            row = self._load(session)
            row.messages = newer
            row.summary = "\n".join(filter(None, [row.summary, digest]))
            row.updated_at = self.services.clock.now()
            session.add(row)

    async def _distil(self, older: list[dict[str, Any]], model) -> str:
        if model is not None:
            from core.prompts import render

            prompt = render("distillation", turns=older, focus=None)
            try:
                text = await model.complete_text(
                    self.services.settings.model_distillation, [{"role": "user", "content": prompt}]
                )
                if text.strip():
                    return text.strip()
            except EloraError as exc:
                log.warning("distillation failed, keeping a plain note: %s", exc)
        first, last = older[0].get("at", "")[:10], older[-1].get("at", "")[:10]
        return f"{len(older)} earlier turns ({first} to {last}) are in session memory."


def _tokens(turns: list[dict[str, Any]], summary: str | None) -> int:
    """Estimated tokens of turns and a summary."""
    return sum(count_tokens(t["content"]) + 4 for t in turns) + count_tokens(summary or "")


def as_messages(turns: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Window turns as chat messages for the model."""
    return [{"role": t["role"], "content": t["content"]} for t in turns]


def needs_compaction(
    turns: list[dict[str, Any]], summary: str | None, context_tokens: int, share: float
) -> bool:
    """Whether a window has grown past `share` of the model's context."""
    return _tokens(turns, summary) > context_tokens * share
