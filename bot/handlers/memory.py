"""/forget (by id, or search then pick, then confirm) and /proposals with buttons."""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from bot.handlers.commands import _args_text
from core.errors import EloraError

PICKS = 5


def _confirm_keyboard(update: Update, context: EloraContext, token: int) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(context.say(update, "yes_forget"), callback_data=f"fg:y:{token}"),
          InlineKeyboardButton(context.say(update, "cancel"), callback_data="fg:n")]]
    )  # fmt: skip


def _remember_choice(context: EloraContext, memory_ids: list[str]) -> int:
    """Callback data is limited to 64 bytes: keep memory ids in chat_data, send an index."""
    context.chat_data["forget"] = memory_ids
    return 0


async def forget(update: Update, context: EloraContext) -> None:
    """/forget ID_OR_QUERY."""
    services = context.services
    arg = _args_text(update)
    if not arg:
        await update.effective_message.reply_text(context.say(update, "forget_usage"))
        return
    entry = services.memory.get(arg)
    if entry is not None:
        _remember_choice(context, [entry.memory_id])
        await update.effective_message.reply_text(
            context.say(update, "forget_confirm", id=html.escape(entry.memory_id),
                        text=html.escape(entry.canonical_text[:300])),
            parse_mode=ParseMode.HTML, reply_markup=_confirm_keyboard(update, context, 0),
        )  # fmt: skip
        return
    hits, _ = services.memory.search(arg, limit=PICKS)
    if not hits:
        await update.effective_message.reply_text(context.say(update, "forget_none"))
        return
    _remember_choice(context, [h.entry.memory_id for h in hits])
    rows = [
        [
            InlineKeyboardButton(
                f"{h.entry.memory_id} — {h.entry.canonical_text[:40]}", callback_data=f"fg:p:{i}"
            )
        ]
        for i, h in enumerate(hits)
    ]
    rows.append([InlineKeyboardButton(context.say(update, "cancel"), callback_data="fg:n")])
    await update.effective_message.reply_text(
        context.say(update, "forget_pick"), reply_markup=InlineKeyboardMarkup(rows)
    )


async def on_forget_button(update: Update, context: EloraContext) -> None:
    """fg:p:N picks, fg:y:N confirms, fg:n cancels."""
    query = update.callback_query
    await query.answer()
    _, action, *rest = query.data.split(":")
    choices = context.chat_data.get("forget") or []
    if action == "n" or not rest or int(rest[0]) >= len(choices):
        await query.edit_message_text(context.say(update, "cancelled"))
        return
    memory_id = choices[int(rest[0])]
    if action == "p":
        entry = context.services.memory.get(memory_id)
        if entry is None:
            await query.edit_message_text(context.say(update, "forget_none"))
            return
        await query.edit_message_text(
            context.say(update, "forget_confirm", id=html.escape(memory_id),
                        text=html.escape(entry.canonical_text[:300])),
            parse_mode=ParseMode.HTML, reply_markup=_confirm_keyboard(update, context, int(rest[0])),
        )  # fmt: skip
        return
    from core.memory.api import forget_memory

    try:
        forget_memory(context.services, memory_id)
    except EloraError:
        await query.edit_message_text(context.say(update, "forget_none"))
        return
    context.chat_data.pop("forget", None)
    await query.edit_message_text(
        context.say(update, "forgotten", id=html.escape(memory_id)), parse_mode=ParseMode.HTML
    )


async def proposals(update: Update, context: EloraContext) -> None:
    """/proposals: the pending ones, each with Approve / Reject buttons."""
    rows = context.services.proposals.list(limit=PICKS)
    if not rows:
        await update.effective_message.reply_text(context.say(update, "proposals_none"))
        return
    for p in rows:
        score = f" · A-MAC {p.total:.1f}" if p.total is not None else ""
        conflict = f"\n⚠️ {p.conflict_relation}" if p.conflict_relation else ""
        keyboard = InlineKeyboardMarkup(
            [[InlineKeyboardButton(context.say(update, "approve"), callback_data=f"pr:a:{p.id}"),
              InlineKeyboardButton(context.say(update, "reject"), callback_data=f"pr:r:{p.id}")]]
        )  # fmt: skip
        await update.effective_message.reply_text(
            f"<b>{p.kind}</b> · {p.tier} · {p.status}{score}\n{html.escape(p.text)}{conflict}",
            parse_mode=ParseMode.HTML, reply_markup=keyboard,
        )  # fmt: skip


async def on_proposal_button(update: Update, context: EloraContext) -> None:
    """pr:a:ID approves, pr:r:ID rejects."""
    from core.learning import review

    query = update.callback_query
    await query.answer()
    _, action, proposal_id = query.data.split(":", 2)
    try:
        if action == "a":
            entry = review.approve(context.services, proposal_id)
            message = context.say(update, "approved", id=html.escape(entry.memory_id))
        else:
            review.reject(context.services, proposal_id)
            message = context.say(update, "rejected")
    except EloraError as exc:
        message = html.escape(str(exc))
    await query.edit_message_text(message, parse_mode=ParseMode.HTML)
