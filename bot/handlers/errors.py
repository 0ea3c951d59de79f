"""The one error handler: log the traceback (secrets redacted by logging), apologise briefly."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError

from bot.context import EloraContext

log = logging.getLogger(__name__)


async def on_error(update: object, context: EloraContext) -> None:
    """Polling trouble is retried by the updater; a failed update gets an apology."""
    error = context.error
    if isinstance(error, RetryAfter):
        # Flood control: an apology now would only hit the same limit.
        log.warning("Telegram flood control, no apology sent: %s", error)
        return
    # BadRequest is a NetworkError too, but it means Telegram refused what we sent: a bug to
    # see in full, and a user who got no answer.
    network = isinstance(error, NetworkError) and not isinstance(error, BadRequest)
    if isinstance(error, BadRequest) and "not modified" in str(error).lower():
        log.info("nothing to change: %s", error)  # e.g. the same button pressed twice
        return
    if network:
        log.warning("Telegram network trouble: %s", error)
    else:
        log.error("handler failed", exc_info=error)
    if isinstance(update, Update) and update.effective_chat is not None:
        try:
            await context.bot.send_message(update.effective_chat.id, context.say(update, "apology"))
        except TelegramError as exc:
            log.warning("could not send the apology: %s", exc)
