"""Update processing: one chat's updates in order, different chats concurrently, and no update
handled twice (a redelivery after a crash or restart is skipped)."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from core import app as elora

log = logging.getLogger(__name__)


def _chat_key(update: object) -> int | None:
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class OrderedPerChat(BaseUpdateProcessor):
    """A FIFO lock per chat; a record of handled update ids in the database."""

    def __init__(self, services, max_concurrent_updates: int = 16):
        super().__init__(max_concurrent_updates)
        self.services = services
        self._locks: dict[Any, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def initialize(self) -> None:
        """Nothing to allocate."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run the update's handlers under its chat's lock, once."""
        update_id = update.update_id if isinstance(update, Update) else None
        async with self._locks[_chat_key(update)]:
            if update_id is not None and elora.already_handled(
                self.services, "telegram", update_id
            ):
                log.info("update %s already handled, skipped", update_id)
                coroutine.close()  # type: ignore[attr-defined]
                return
            await coroutine
            if update_id is not None:
                elora.mark_handled(self.services, "telegram", update_id)
