"""The allowlist: anyone else gets a short refusal and nothing of theirs is stored."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop

from bot.context import EloraContext

log = logging.getLogger(__name__)


async def guard(update: Update, context: EloraContext) -> None:
    """Runs first for every update; stops processing for users outside the allowlist."""
    user = update.effective_user
    allowed = context.services.settings.allowed_user_ids()
    if user is not None and user.id in allowed:
        return
    log.info("refused update from user %s", user.id if user else "unknown")
    chat = update.effective_chat
    if update.callback_query is not None:
        await update.callback_query.answer(context.say(update, "refused"), show_alert=True)
    elif chat is not None and chat.type == ChatType.PRIVATE and update.effective_message:
        await update.effective_message.reply_text(context.say(update, "refused"))
    raise ApplicationHandlerStop
