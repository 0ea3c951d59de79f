"""Sending replies: typing indicator while working, HTML with a plain-text fallback, splitting,
feedback buttons where reactions can't reach us, and the reply→trace record."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import BadRequest

from bot.context import EloraContext
from bot.format import render_reply, split_markdown
from core import app as elora
from core.errors import StorageUnavailable
from core.offload import run_blocking

if TYPE_CHECKING:
    from core.app import Reply

log = logging.getLogger(__name__)
TYPING_EVERY = 4.0


@contextlib.asynccontextmanager
async def typing(update: Update, context: EloraContext):
    """Show "typing…" until the block finishes (Telegram clears it after ~5 s)."""
    chat = update.effective_chat

    async def show() -> None:
        try:
            await context.bot.send_chat_action(chat.id, ChatAction.TYPING)
        except Exception as exc:  # best effort: an indicator is never worth failing a reply
            log.debug("could not show typing in chat %s: %s", chat.id, exc)

    async def keep_typing():
        while True:
            await asyncio.sleep(TYPING_EVERY)
            await show()

    # Shown at once, so the user sees the bot at work from the start; the repeats then keep it
    # up until the block finishes.
    if chat:
        await show()
    task = asyncio.create_task(keep_typing()) if chat else None
    try:
        yield
    finally:
        if task:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def feedback_keyboard(trace_id: str) -> InlineKeyboardMarkup:
    """👍/👎 buttons for chats where reactions don't reach the bot."""
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton("👍", callback_data=f"fb:up:{trace_id}"),
          InlineKeyboardButton("👎", callback_data=f"fb:down:{trace_id}")]]
    )  # fmt: skip


def wants_buttons(update: Update, context: EloraContext) -> bool:
    """Reactions reach bots in private chats; groups get buttons (or as configured)."""
    mode = context.services.settings.telegram_feedback_buttons
    if mode != "auto":
        return mode == "always"
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE


async def send_html(chat_id: int, html_text: str, context: EloraContext, **kwargs) -> Message:
    """Send HTML; if Telegram rejects the markup, send the same text without it."""
    try:
        return await context.bot.send_message(
            chat_id, html_text, parse_mode=ParseMode.HTML, **kwargs
        )
    except BadRequest as exc:
        if "parse" not in str(exc).lower() and "entit" not in str(exc).lower():
            raise
        log.warning("HTML rejected by Telegram, sending plain text: %s", exc)
        import html
        import re

        plain = html.unescape(re.sub(r"<[^>]+>", "", html_text))
        return await context.bot.send_message(chat_id, plain, **kwargs)


async def send_reply(
    update: Update, context: EloraContext, markdown: str, trace_id: str | None = None
) -> list[Message]:
    """Send a model reply (Markdown) as one or more HTML messages; map them to the trace."""
    chat_id = update.effective_chat.id
    parts = render_reply(markdown) if markdown.strip() else ["…"]
    sent = []
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        markup = (
            feedback_keyboard(trace_id)
            if (last and trace_id and wants_buttons(update, context))
            else None
        )
        sent.append(await send_html(chat_id, part, context, reply_markup=markup))
    if trace_id:
        try:
            await run_blocking(_remember_replies, context.services, chat_id, sent, trace_id)
        except StorageUnavailable as exc:  # feedback on this reply won't find its trace
            log.warning("reply not mapped to its trace: %s", exc)
    return sent


def _remember_replies(services, chat_id: int, sent: list[Message], trace_id: str) -> None:
    for message in sent:
        elora.note_reply(services, "telegram", str(chat_id), str(message.message_id), trace_id)


async def send_answer(update: Update, context: EloraContext, reply: Reply) -> list[Message]:
    """Send the pipeline's answer, then one short note if part of it waits in the spool."""
    sent = await send_reply(update, context, reply.text, reply.trace_id)
    if reply.spooled:
        note = await context.bot.send_message(
            update.effective_chat.id, context.say(update, "saving_delayed")
        )
        sent.append(note)
    return sent


async def send_then_learn(update: Update, context: EloraContext, reply: Reply) -> None:
    """Send the pipeline's answer, then learn from the exchange and store its trace (also when
    sending failed): the chat's next update waits for both, the user does not."""
    try:
        await send_answer(update, context, reply)
    finally:
        await elora.after_reply(context.services, reply)


__all__ = [
    "feedback_keyboard", "send_answer", "send_html", "send_reply", "send_then_learn",
    "split_markdown", "typing",
]  # fmt: skip
