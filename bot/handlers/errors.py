"""The one error handler: log the traceback (secrets redacted by logging), apologise briefly."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import NetworkError, RetryAfter, TimedOut

from bot.context import EloraContext

log = logging.getLogger(__name__)


async def on_error(update: object, context: EloraContext) -> None:
    """Network trouble is retried by the updater; anything else gets an apology."""
    error = context.error
    if isinstance(error, RetryAfter | TimedOut | NetworkError):
        log.warning("Telegram network trouble: %s", error)
        return
    log.error("handler failed", exc_info=error)
    if isinstance(update, Update) and update.effective_chat is not None:
        try:
            await context.bot.send_message(update.effective_chat.id, context.say(update, "apology"))
        except Exception:
            log.warning("could not send the apology")
