"""Slash commands: /start /help /new /remember /topics /private /status (and unknown ones)."""

from __future__ import annotations

import html

from telegram import Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from core import app as elora
from core.offload import run_blocking


def _args_text(update: Update) -> str:
    text = update.effective_message.text or ""
    return text.split(maxsplit=1)[1].strip() if len(text.split(maxsplit=1)) > 1 else ""


async def _html(update: Update, body: str) -> None:
    await update.effective_message.reply_text(body, parse_mode=ParseMode.HTML)


async def start(update: Update, context: EloraContext) -> None:
    """Greet the operator."""
    name = html.escape(update.effective_user.first_name or "")
    await _html(update, context.say(update, "start", name=name))


async def help_command(update: Update, context: EloraContext) -> None:
    """List what Elora can do."""
    await _html(update, context.say(update, "help"))


async def new(update: Update, context: EloraContext) -> None:
    """Close the session: purge session memory and restart the conversation window."""
    chat_id, user_id = str(update.effective_chat.id), str(update.effective_user.id)
    await run_blocking(elora.new_conversation, context.services, "telegram", chat_id, user_id)
    await _html(update, context.say(update, "new"))


def said(update: Update) -> elora.Request:
    """The message of an update, as core receives it."""
    message, user = update.effective_message, update.effective_user
    return elora.Request(
        surface="telegram", chat_id=str(update.effective_chat.id), text=message.text or "",
        user_id=str(user.id), message_id=str(message.message_id), sender=user.full_name,
        sent_at=message.date,
    )  # fmt: skip


async def remember_command(update: Update, context: EloraContext) -> None:
    """/remember TEXT: an explicit save, approved by definition, sourced to this message."""
    body = _args_text(update)
    if not body:
        await _html(update, context.say(update, "remember_usage"))
        return
    from bot.handlers.undo import acting_here, undo_keyboard

    def save():
        # The command message is archived verbatim (unless the chat is private) and cited.
        with acting_here(update) as who:
            kept = elora.remember(
                context.services, body, kind=None, importance=3, said=said(update)
            )
        return kept, who

    kept, who = await run_blocking(save)
    entry, key = kept.entry, "remembered_again" if kept.confirmed else "remembered"
    await update.effective_message.reply_text(
        context.say(update, key, id=html.escape(entry.memory_id), tier=entry.tier,
                    n=entry.observations),
        parse_mode=ParseMode.HTML, reply_markup=undo_keyboard(update, context, who.last_action),
    )  # fmt: skip


async def topics(update: Update, context: EloraContext) -> None:
    """What Elora remembers, grouped by tier."""
    rows = await run_blocking(
        elora.topics_for,
        context.services,
        str(update.effective_user.id),
        str(update.effective_chat.id),
    )
    if not rows:
        await _html(update, context.say(update, "topics_none"))
        return
    lines = [context.say(update, "topics_title")]
    for row in rows[:40]:
        tags = ", ".join(row["topics"][:4])
        lines.append(
            f"• <code>{html.escape(row['memory_id'])}</code> [{row['tier']}] "
            f"★{row['importance']} {html.escape(tags)}"
        )
    if len(rows) > 40:
        lines.append(f"… +{len(rows) - 40}")
    await _html(update, "\n".join(lines))


async def private(update: Update, context: EloraContext) -> None:
    """/private on|off."""
    arg = _args_text(update).lower()
    if arg not in ("on", "off"):
        await _html(update, context.say(update, "private_usage"))
        return
    await run_blocking(
        elora.set_private, context.services, "telegram", str(update.effective_chat.id), arg == "on"
    )
    await _html(update, context.say(update, f"private_{arg}"))


async def status(update: Update, context: EloraContext) -> None:
    """Today's spend, models, spool backlog and proposals waiting."""
    now = await run_blocking(elora.status, context.services)
    models = ", ".join(
        f"{tier}={html.escape(model) if model else '—'}" for tier, model in now["models"].items()
    )
    cap = now["cap"]
    await _html(
        update,
        context.say(
            update, "status", spend=now["spend"],
            cap=context.say(update, "status_cap", cap=cap) if cap is not None else "",
            models=models, spool=now["spool"], proposals=now["proposals"],
        ),
    )  # fmt: skip


async def unknown(update: Update, context: EloraContext) -> None:
    """A command Elora doesn't have: say so rather than stay silent."""
    await _html(update, context.say(update, "unknown_command"))
