"""The "Undo" button under confirmations (approve, remember, forget) and what it does."""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from core import app as elora
from core.errors import EloraError
from core.offload import run_blocking


def undo_keyboard(update: Update, context: EloraContext, action_id: str | None):
    """One "Undo" button for an action (None when there is nothing to undo)."""
    if action_id is None:
        return None
    label = context.say(update, "undo", n=context.services.settings.undo_minutes)
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=f"un:{action_id}")]])


def acting_here(update: Update):
    """Act as this Telegram user, in the bot: a long-running process that can hold a forget's
    undo in its memory."""
    return elora.acting("telegram", actor=str(update.effective_user.id), holds=True)


def _undo(services, action_id: str, user_id: int):
    """Undo an action, if this user made it (the operator may undo any)."""
    with elora.acting("telegram", actor=str(user_id), holds=True):
        return elora.undo(services, action_id, by=user_id)


async def on_undo_button(update: Update, context: EloraContext) -> None:
    """un:ACTION_ID undoes that action; the confirmation it was under says what happened."""
    query = update.callback_query
    await query.answer()
    action_id = query.data.split(":", 1)[1]
    try:
        done = await run_blocking(_undo, context.services, action_id, update.effective_user.id)
        ids = [*done.removed, *done.restored] or [done.action.id[:8]]
        what = ", ".join(f"<code>{html.escape(i)}</code>" for i in ids)
        message = context.say(update, "undone", what=what)
    except EloraError as exc:
        message = context.say(update, "undo_failed", why=html.escape(str(exc)))
    await query.edit_message_text(message, parse_mode=ParseMode.HTML)
