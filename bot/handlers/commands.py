"""Slash commands: /start /help /new /remember /topics /private /status (and unknown ones)."""

from __future__ import annotations

import html

from telegram import Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from core.archive.records import CaptureIn
from core.offload import run_blocking
from core.routing.tiers import TIERS, resolve


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
    services = context.services
    chat_id, user_id = str(update.effective_chat.id), str(update.effective_user.id)
    await run_blocking(services.window("telegram", chat_id, user_id).reset)
    await run_blocking(services.session_memory.end_session, user_id, chat_id)
    await _html(update, context.say(update, "new"))


def capture_command(update: Update, context: EloraContext) -> str | None:
    """Archive a command message verbatim (unless the chat is private); return its capture id.

    Blocking: call it through run_blocking."""
    services = context.services
    chat = update.effective_chat
    if services.surfaces.is_private("telegram", str(chat.id)):
        return None
    message = update.effective_message
    result = services.archive.capture(
        CaptureIn(surface="telegram", chat_id=str(chat.id), text=message.text or "",
                  sent_at=message.date, user_id=str(update.effective_user.id),
                  message_id=str(message.message_id), sender=update.effective_user.full_name,
                  kind="command", operator=services.settings.is_operator(update.effective_user.id))
    )  # fmt: skip
    return result.id


async def remember_command(update: Update, context: EloraContext) -> None:
    """/remember TEXT: an explicit save, approved by definition, sourced to this message."""
    from core.learning.heuristics import _kind_of
    from core.memory.api import remember_or_confirm
    from core.recall.lexical import fold

    body = _args_text(update)
    if not body:
        await _html(update, context.say(update, "remember_usage"))
        return
    from bot.handlers.undo import acting_here, undo_keyboard

    def save():
        capture_id = capture_command(update, context)
        sources = None
        if capture_id:
            from core.learning.canonical import capture_sources

            sources = capture_sources(context.services, [capture_id])
        with acting_here(update) as who:
            kept = remember_or_confirm(
                context.services, body, kind=_kind_of(fold(body)), importance=3, sources=sources
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
    services = context.services
    rows = await run_blocking(services.memory.topics, scope=None)
    mine = {"global", f"user:{update.effective_user.id}", f"chat:{update.effective_chat.id}"}
    rows = [r for r in rows if r["scope"] in mine or not r["scope"].startswith(("user:", "chat:"))]
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
        context.services.surfaces.set_private,
        "telegram",
        str(update.effective_chat.id),
        arg == "on",
    )
    await _html(update, context.say(update, f"private_{arg}"))


async def status(update: Update, context: EloraContext) -> None:
    """Today's spend, models, spool backlog and proposals waiting."""
    services = context.services
    settings = services.settings
    models = []
    for tier in TIERS:
        spec = resolve(settings, tier)
        models.append(f"{tier}={html.escape(spec.model) if spec else '—'}")
    cap = settings.daily_spend_cap
    spend, spool, waiting = await run_blocking(
        lambda: (
            services.traces.spent_today(),
            services.spool.backlog(),
            services.proposals.count(),
        )
    )
    await _html(
        update,
        context.say(
            update, "status", spend=spend,
            cap=context.say(update, "status_cap", cap=cap) if cap is not None else "", models=", ".join(models),
            spool=spool, proposals=waiting,
        ),
    )  # fmt: skip


async def unknown(update: Update, context: EloraContext) -> None:
    """A command Elora doesn't have: say so rather than stay silent."""
    await _html(update, context.say(update, "unknown_command"))
