"""👍/👎 reactions (and buttons where reactions don't arrive) feed the capability profile."""

from __future__ import annotations

import logging

from telegram import ReactionTypeEmoji, Update

from bot.context import EloraContext
from core import app as elora
from core.errors import EloraError
from core.offload import run_blocking

log = logging.getLogger(__name__)
UP = {"👍", "❤", "❤️", "🔥", "👏", "🎉", "💯"}
DOWN = {"👎", "💩", "🤮", "😡"}


def _signal(update: Update) -> str | None:
    reaction = update.message_reaction
    emojis = {r.emoji for r in reaction.new_reaction if isinstance(r, ReactionTypeEmoji)}
    if emojis & DOWN:
        return "down"
    if emojis & UP:
        return "up"
    return None


async def on_reaction(update: Update, context: EloraContext) -> None:
    """A reaction on one of Elora's replies updates the profile for that reply's trace."""
    signal = _signal(update)
    if signal is None:
        return
    reaction = update.message_reaction
    chat_id, message_id = str(reaction.chat.id), str(reaction.message_id)
    try:
        await run_blocking(
            elora.feedback_on_reply, context.services, "telegram", chat_id, message_id, signal
        )
    except EloraError as exc:
        log.warning("feedback not recorded: %s", exc)


async def on_feedback_button(update: Update, context: EloraContext) -> None:
    """fb:up:TRACE / fb:down:TRACE buttons."""
    query = update.callback_query
    _, signal, trace_id = query.data.split(":", 2)
    try:
        await run_blocking(
            elora.feedback, context.services, str(update.effective_chat.id), signal,
            trace_id=trace_id,
        )  # fmt: skip
    except EloraError as exc:
        log.warning("feedback not recorded: %s", exc)
    await query.answer(context.say(update, "thanks_feedback"))
    await query.edit_message_reply_markup(None)
