"""Files: captured verbatim, indexed in session memory; the model sees a register and searches."""

from __future__ import annotations

import html

from telegram import Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from bot.handlers.messages import request_from
from bot.handlers.replies import send_then_learn, typing
from core import app as elora
from core.errors import InvalidInput
from core.offload import run_blocking


async def on_document(update: Update, context: EloraContext) -> None:
    """Take a document; answer its caption as a question if there is one."""
    services = context.services
    document = update.effective_message.document
    limit = services.settings.max_document_bytes
    if document.file_size and document.file_size > limit:
        await update.effective_message.reply_text(
            context.say(update, "doc_too_big", size=document.file_size / 1e6, limit=limit / 1e6)
        )
        return
    chat_id, user_id = str(update.effective_chat.id), str(update.effective_user.id)
    message = update.effective_message
    private = await run_blocking(elora.is_private, services, "telegram", chat_id)
    async with typing(update, context):
        file = await document.get_file()
        data = bytes(await file.download_as_bytearray())
        try:
            # The register joins the conversation window, so later questions can search the
            # file. A private chat keeps no turns: the register only goes with its caption.
            register = await elora.add_document(
                services, surface="telegram", chat_id=chat_id, user_id=user_id,
                name=document.file_name or "document", data=data, sent_at=message.date,
                message_id=str(message.message_id), caption=message.caption, private=private,
                into_window=True,
            )  # fmt: skip
        except InvalidInput as exc:
            await message.reply_text(context.say(update, "doc_rejected", reason=str(exc)))
            return
        caption = (message.caption or "").strip()
        if not caption:
            await message.reply_text(
                context.say(update, "doc_received", name=html.escape(register.name),
                            chars=register.chars),
                parse_mode=ParseMode.HTML,
            )  # fmt: skip
            return
        extra = {"extra_context": register.render()} if private else {}
        request = await request_from(update, context, caption, **extra)
        reply = await elora.answer(services, request)
    await send_then_learn(update, context, reply)
