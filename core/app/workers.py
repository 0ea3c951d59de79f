"""Several `elora bot` workers on one PostgreSQL (core/workers): the shared update queue,
the notifications that wake a worker and the election of the one that polls Telegram. The
bot (bot/workers.py) uses these; SQLite homes have one process and need none of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.workers.coordination import Leadership, Listener
from core.workers.updates import UpdateQueue

if TYPE_CHECKING:
    from core.services import Services

__all__ = ["Leadership", "Listener", "UpdateQueue", "shares_updates", "update_queue"]


def shares_updates(services: Services) -> bool:
    """Whether this home's bot workers share one update queue (PostgreSQL)."""
    return services.db.dialect == "postgresql"


def update_queue(services: Services) -> UpdateQueue:
    """The update queue every worker of this home stores into and claims from."""
    return UpdateQueue(services)
