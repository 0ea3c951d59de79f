"""Plain text messages: every one goes through the core pipeline."""

from __future__ import annotations

from telegram import Update

from bot.context import EloraContext
from bot.handlers.replies import send_then_learn, typing
from bot.processor import next_is_message
from core import app as elora
from core.offload import run_blocking


async def request_from(update: Update, context: EloraContext, text: str, **extra) -> elora.Request:
    """A core Request from a Telegram message."""
    message = update.effective_message
    user = update.effective_user
    chat = update.effective_chat
    private = await run_blocking(elora.is_private, context.services, "telegram", str(chat.id))
    return elora.Request(
        surface="telegram",
        chat_id=str(chat.id),
        text=text,
        user_id=str(user.id),
        message_id=str(message.message_id),
        sender=user.full_name,
        sent_at=message.date,
        private=private,
        provenance={"chat_type": chat.type, "telegram_user": user.id},
        more_waiting=next_is_message(),
        **extra,
    )


async def on_text(update: Update, context: EloraContext) -> None:
    """Answer a message with memory, showing "typing…" meanwhile; learn from it once the
    answer is sent (the chat's next message still waits for that)."""
    message = update.effective_message
    async with typing(update, context):
        request = await request_from(update, context, message.text)
        reply = await elora.answer(context.services, request)
    await send_then_learn(update, context, reply)
