"""Update processing: one chat's updates in order, different chats concurrently (a bounded
number at once), and no update handled twice (a redelivery after a crash or restart is skipped).

PTB's own semaphore is taken before an update reaches us, so an update waiting for its chat's
turn would hold one of its slots: a single chat with a long backlog could then fill them all
and stall every other chat. Here PTB's bound is only a cap on queued updates; the real bound
on chats in flight is taken after the update has its chat's turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from core import app as elora
from core.errors import StorageUnavailable
from core.offload import WorkSlots, run_blocking

log = logging.getLogger(__name__)

# Updates PTB may hand over before the first of them is finished (they wait for their turn).
QUEUED = 4096


def _chat_key(update: object) -> int | None:
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


def _plain_message(update: object) -> bool:
    """A new text message that is not a command (what goes to the pipeline as it is)."""
    message = update.message if isinstance(update, Update) else None
    return message is not None and bool(message.text) and not message.text.startswith("/")


# For the update being handled: whether its chat's next update, already received, is a plain
# message (so learning may read this exchange together with it).
_NEXT_IS_MESSAGE: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "elora_next_is_message", default=None
)


def next_is_message() -> Callable[[], bool] | None:
    """Asks, when called, whether the chat of the update being handled has a plain message
    waiting after it (None outside an ordered update)."""
    return _NEXT_IS_MESSAGE.get()


class OrderedPerChat(BaseUpdateProcessor):
    """A FIFO queue per chat, at most `max_chats` chats in flight and `work_slots` of them
    doing local work at once, and a record of handled update ids in the database."""

    def __init__(self, services, max_chats: int = 32, work_slots: int | None = None):
        super().__init__(QUEUED)
        self.services = services
        self.max_chats = max_chats
        self.slots = WorkSlots(work_slots or max_chats)
        # Per chat: its turn, and its updates received and not finished (in arrival order).
        self._turns: dict[Any, tuple[asyncio.Lock, list[object]]] = {}
        self._running: asyncio.Semaphore | None = None
        self.in_flight = 0
        self.peak_in_flight = 0

    async def initialize(self) -> None:
        """Nothing to allocate."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def _turn(self, key: Any, update: object) -> tuple[asyncio.Lock, list[object]]:
        turn = self._turns.get(key)
        if turn is None:
            turn = self._turns[key] = (asyncio.Lock(), [])
        turn[1].append(update)
        return turn

    def _leave(self, key: Any, update: object) -> bool:
        """Forget a finished update; whether its chat has nothing left (its queue goes)."""
        _, waiting = self._turns[key]
        waiting.remove(update)
        if not waiting:
            del self._turns[key]
            return True
        return False

    def _next_is_message(self, key: Any, update: object) -> bool:
        turn = self._turns.get(key)
        if turn is None or update not in turn[1]:
            return False
        waiting = turn[1]
        after = waiting.index(update) + 1
        return after < len(waiting) and _plain_message(waiting[after])

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run the update's handlers in its chat's turn, within the in-flight bound, once."""
        if self._running is None:
            self._running = asyncio.Semaphore(self.max_chats)
        key = _chat_key(update)
        lock, _ = self._turn(key, update)
        token = _NEXT_IS_MESSAGE.set(lambda: self._next_is_message(key, update))
        try:
            async with lock, self._running:
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                try:
                    async with self.slots.slot():
                        await self._once(update, coroutine)
                finally:
                    self.in_flight -= 1
        finally:
            _NEXT_IS_MESSAGE.reset(token)
            if self._leave(key, update) and key is not None:
                await self._learn_what_waited(key)

    async def _learn_what_waited(self, key: Any) -> None:
        """The chat's burst is over: learn from the exchanges kept for its next message (one
        that was then skipped, or failed before learning, leaves some behind)."""
        try:
            await elora.flush_learning(self.services, "telegram", str(key))
        except Exception as exc:  # learning never costs a reply; the exchanges stay archived
            log.warning("learning from chat %s's last messages failed: %s", key, exc)

    async def _once(self, update: object, coroutine: Awaitable[Any]) -> None:
        update_id = update.update_id if isinstance(update, Update) else None
        if update_id is not None and await run_blocking(
            elora.already_handled, self.services, "telegram", update_id
        ):
            log.info("update %s already handled, skipped", update_id)
            coroutine.close()  # type: ignore[attr-defined]
            return
        await coroutine
        if update_id is not None:
            try:
                await run_blocking(elora.mark_handled, self.services, "telegram", update_id)
            except StorageUnavailable as exc:  # handled all the same; a redelivery may repeat it
                log.warning("update %s not recorded as handled: %s", update_id, exc)
