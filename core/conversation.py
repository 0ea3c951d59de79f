"""The per-chat conversation window, persisted in SQLite so a restart loses nothing.

When the window grows past a share (~30 %) of the model's context, its older half is distilled:
the raw turns go to session memory (searchable with search_session_context) and a short
summary stays in the window, so nothing is silently dropped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from core import threads
from core.errors import EloraError
from core.recall.tokens import count_tokens

if TYPE_CHECKING:
    from core.clock import Clock
    from core.memory.session import SessionMemory
    from core.storage.db import Database

log = logging.getLogger(__name__)


def window_id(surface: str, chat_id: str) -> str:
    """The thread id of a chat's window."""
    return f"window:{surface}:{chat_id}"


class ConversationWindow:
    """Recent turns of one chat, with a summary of what was distilled away (a row of
    core.threads)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        session_memory: SessionMemory,
        distillation_model: str,
        surface: str,
        chat_id: str,
        user_id: str | None = None,
    ):
        self.db = db
        self.clock = clock
        self.session_memory = session_memory  # where distilled turns stay searchable
        self.distillation_model = distillation_model
        self.surface = surface
        self.chat_id = str(chat_id)
        self.user_id = str(user_id) if user_id is not None else ""
        self.id = window_id(surface, self.chat_id)

    def _edit(self, change) -> None:
        threads.edit(self.db, self.id, "window", self.chat_id, self.clock.now(), change)

    def load(self) -> tuple[list[dict[str, Any]], str | None]:
        """The turns (oldest first) and the summary of distilled turns, in one read."""
        return threads.turns_of(self.db, self.id)

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
        at = self.clock.now().isoformat()

        def add(row) -> None:
            row.messages = [
                *row.messages,
                *({"role": role, "content": content, "capture_id": capture_id, "at": at}
                  for role, content, capture_id in turns),
            ]  # fmt: skip

        self._edit(add)

    def reset(self) -> None:
        """Start over (e.g. /new): the window and its summary are cleared."""

        def clear(row) -> None:
            row.messages, row.summary = [], None

        self._edit(clear)

    def tokens(self) -> int:
        """Estimated tokens of the window and its summary."""
        return _tokens(*self.load())

    def messages(self) -> list[dict[str, str]]:
        """The window as chat messages for the model."""
        return as_messages(self.turns())

    async def compact(self, context_tokens: int, share: float, model=None) -> bool:
        """Distil the older half into session memory when the window passes `share` of context.

        Its database and embedding work runs off the event loop, beside the model call.
        """
        from core.offload import run_blocking

        turns, summary = await run_blocking(self.load)
        if not needs_compaction(turns, summary, context_tokens, share):
            return False
        half = max(1, len(turns) // 2)
        older, newer = turns[:half], turns[half:]
        source = f"conversation:{self.chat_id}"
        # The older turns go to session memory while the model distils them (the two are
        # independent); their vectors are the archive's, what it has not embedded yet is
        # embedded meanwhile.
        saving = asyncio.ensure_future(
            run_blocking(self.session_memory.save_turns, self.user_id, self.chat_id, source, older)
        )
        distilling = asyncio.ensure_future(self._distil(older, model))
        try:
            _, digest = await asyncio.gather(saving, distilling)
        except BaseException as exc:  # the other one is not left running unobserved
            distilling.cancel()
            await asyncio.gather(saving, distilling, return_exceptions=True)
            if not isinstance(exc, EloraError):
                raise
            # Session memory could not take the older turns: the window stays whole (they are
            # still in the archive) and the answer goes on; the next message tries again.
            log.warning("window %s not compacted: %s", self.id, exc)
            return False
        await run_blocking(self._keep, newer, digest)
        log.info("window %s: %d turns distilled into session memory", self.id, len(older))
        return True

    def _keep(self, newer: list[dict[str, Any]], digest: str) -> None:
        def keep(row) -> None:
            row.messages = newer
            row.summary = "\n".join(filter(None, [row.summary, digest]))

        self._edit(keep)

    async def _distil(self, older: list[dict[str, Any]], model) -> str:
        if model is not None:
            from core.prompts import render

            prompt = render("distillation", turns=older, focus=None)
            try:
                text = await model.complete_text(
                    self.distillation_model, [{"role": "user", "content": prompt}]
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
