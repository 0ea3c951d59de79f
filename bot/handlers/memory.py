"""/forget (by id, or search then pick, then confirm) and /proposals with buttons."""

from __future__ import annotations

import html
import uuid

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ParseMode

from bot.context import EloraContext
from bot.handlers.commands import _args_text
from bot.handlers.undo import acting_here, undo_keyboard
from core import app as elora
from core.errors import EloraError
from core.offload import run_blocking

PICKS = 5
MAX_OFFERS = 20


def _confirm_keyboard(
    update: Update, context: EloraContext, token: str, index: int, messages: int = 0
):
    rows = [
        [
            InlineKeyboardButton(
                context.say(update, "yes_forget"), callback_data=f"fg:y:{token}:{index}"
            ),
            InlineKeyboardButton(context.say(update, "cancel"), callback_data=f"fg:n:{token}"),
        ]
    ]
    if messages:  # forget means every copy: offer the messages that hold it too
        rows.append(
            [
                InlineKeyboardButton(
                    context.say(update, "forget_with_messages", n=messages),
                    callback_data=f"fg:s:{token}:{index}",
                )
            ]
        )
    return InlineKeyboardMarkup(rows)


def _messages_holding(services, memory_id: str) -> int:
    """How many archived messages `forget --with-sources` would erase with the entry."""
    return len(elora.forget_preview(services, memory_id=memory_id, with_sources=True).messages)


async def _ask_to_confirm(update: Update, context: EloraContext, entry, token: str, index: int,
                          edit=None) -> None:  # fmt: skip
    """The confirmation: the entry, how many messages hold it, and the buttons."""
    messages = await run_blocking(_messages_holding, context.services, entry.memory_id)
    minutes = context.services.settings.undo_minutes
    text = context.say(update, "forget_confirm_undo" if minutes else "forget_confirm",
                       id=html.escape(entry.memory_id), n=minutes,
                       text=html.escape(entry.canonical_text[:300]))  # fmt: skip
    if messages:
        text += "\n" + context.say(update, "forget_messages_note", n=messages)
        if minutes:
            text += " " + context.say(update, "forget_messages_no_undo")
    keyboard = _confirm_keyboard(update, context, token, index, messages)
    send = edit or update.effective_message.reply_text
    await send(text, parse_mode=ParseMode.HTML, reply_markup=keyboard)


def _offer(context: EloraContext, memory_ids: list[str]) -> str:
    """Callback data is limited to 64 bytes: keep the memory ids in chat_data under a token of
    this prompt, so an older prompt's buttons never act on a newer prompt's choices."""
    offers = context.chat_data.setdefault("forget", {})
    while len(offers) >= MAX_OFFERS:  # prompts left unanswered: drop the oldest
        offers.pop(next(iter(offers)))
    token = uuid.uuid4().hex[:8]
    offers[token] = memory_ids
    return token


async def forget(update: Update, context: EloraContext) -> None:
    """/forget ID_OR_QUERY."""
    services = context.services
    arg = _args_text(update)
    if not arg:
        await update.effective_message.reply_text(context.say(update, "forget_usage"))
        return
    entry = await run_blocking(elora.get_memory, services, arg)
    if entry is not None:
        await _ask_to_confirm(update, context, entry, _offer(context, [entry.memory_id]), 0)
        return
    found = await run_blocking(elora.find_memory, services, arg, PICKS)
    if not found:
        await update.effective_message.reply_text(context.say(update, "forget_none"))
        return
    token = _offer(context, [e.memory_id for e in found])
    rows = [
        [
            InlineKeyboardButton(
                f"{e.memory_id} — {e.canonical_text[:40]}", callback_data=f"fg:p:{token}:{i}"
            )
        ]
        for i, e in enumerate(found)
    ]
    rows.append(
        [InlineKeyboardButton(context.say(update, "cancel"), callback_data=f"fg:n:{token}")]
    )
    await update.effective_message.reply_text(
        context.say(update, "forget_pick"), reply_markup=InlineKeyboardMarkup(rows)
    )


async def on_forget_button(update: Update, context: EloraContext) -> None:
    """fg:p:TOKEN:N picks, fg:y:TOKEN:N confirms, fg:s:TOKEN:N confirms with the messages that
    hold it, fg:n:TOKEN cancels."""
    query = update.callback_query
    await query.answer()
    _, action, token, *rest = [*query.data.split(":"), ""][:4]
    offers = context.chat_data.get("forget") or {}
    choices = offers.get(token) or []
    index = int(rest[0]) if rest and rest[0].isdigit() else len(choices)
    if action == "n" or index >= len(choices):  # cancelled, or a prompt from before a restart
        offers.pop(token, None)
        await query.edit_message_text(context.say(update, "cancelled"))
        return
    memory_id = choices[index]
    if action == "p":
        entry = await run_blocking(elora.get_memory, context.services, memory_id)
        if entry is None:
            await query.edit_message_text(context.say(update, "forget_none"))
            return
        await _ask_to_confirm(update, context, entry, token, index, edit=query.edit_message_text)
        return
    with_sources = action == "s"
    try:
        report, undoable = await run_blocking(
            _forget, update, context.services, memory_id, with_sources
        )
    except EloraError:
        await query.edit_message_text(context.say(update, "forget_none"))
        return
    offers.pop(token, None)
    done = context.say(update, "forgotten", id=html.escape(memory_id))
    if undoable is not None:
        done = context.say(update, "forgotten_undo", id=html.escape(memory_id),
                           n=context.services.settings.undo_minutes)  # fmt: skip
    if with_sources:
        done = context.say(update, "forgotten_with_messages", id=html.escape(memory_id),
                           n=report.removed_captures)  # fmt: skip
    keyboard = undo_keyboard(update, context, undoable)
    await query.edit_message_text(done, parse_mode=ParseMode.HTML, reply_markup=keyboard)


def _forget(update: Update, services, memory_id: str, with_sources: bool):
    """Forget as this user; an entry's forget keeps its undo in the bot's memory. Returns the
    report and the undoable action's id (None: not undoable)."""
    with acting_here(update) as who:
        return elora.forget(services, memory_id, with_sources=with_sources), who.last_action


async def proposals(update: Update, context: EloraContext) -> None:
    """/proposals: the pending ones, each with Approve / Reject buttons."""
    views = await run_blocking(elora.review_queue, context.services, limit=PICKS)
    if not views:
        await update.effective_message.reply_text(context.say(update, "proposals_none"))
        return
    for view in views:
        p = view.proposal
        score = f" · A-MAC {p.total:.1f}" if p.total is not None else ""
        score += " · approving…" if view.approving else ""
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
    query = update.callback_query
    await query.answer()
    _, action, proposal_id = query.data.split(":", 2)
    keyboard = None
    try:
        if action == "a":
            entry, who = await run_blocking(_approve, update, context.services, proposal_id)
            key = "forgotten" if entry.status == "forgotten" else "approved"
            if key == "forgotten" and who.last_action:
                key = "forgotten_undo"
            message = context.say(update, key, id=html.escape(entry.memory_id),
                                  n=context.services.settings.undo_minutes)  # fmt: skip
            keyboard = undo_keyboard(update, context, who.last_action)
        else:
            await run_blocking(elora.reject, context.services, proposal_id)
            message = context.say(update, "rejected")
    except EloraError as exc:
        message = html.escape(str(exc))
    await query.edit_message_text(message, parse_mode=ParseMode.HTML, reply_markup=keyboard)


def _approve(update: Update, services, proposal_id: str):
    """Approve as this user; returns the entry and who acted (with the undoable action)."""
    with acting_here(update) as who:
        return elora.approve(services, proposal_id), who
