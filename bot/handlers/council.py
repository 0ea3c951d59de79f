"""/council QUESTION [--skills a,b,c]: a progress message edited per round, then the synthesis."""

from __future__ import annotations

import re

from telegram import Update

from bot.context import EloraContext
from bot.handlers.commands import _args_text
from bot.handlers.replies import send_reply, typing
from core import app as elora
from core.errors import EloraError

_SKILLS = re.compile(r"--skills[= ]([\w,-]+)")
DEFAULT_PANEL = 3


async def council(update: Update, context: EloraContext) -> None:
    """Convene the round table on a question."""
    services = context.services
    raw = _args_text(update)
    found = _SKILLS.search(raw)
    question = _SKILLS.sub("", raw).strip()
    if not question:
        await update.effective_message.reply_text(context.say(update, "council_usage"))
        return
    if found:
        skills = found.group(1).split(",")
    else:
        skills = [s.skill_id for s in elora.list_skills(services)[:DEFAULT_PANEL]]
    progress = await update.effective_message.reply_text(
        context.say(update, "council_started", n=len(set(skills)), rounds=elora.DEFAULT_ROUNDS)
    )

    async def on_round(number: int, record: dict) -> None:
        failed = record["failures"]
        note = f", {len(failed)} ✗" if failed else ""
        await progress.edit_text(
            context.say(update, "council_round", round=number, rounds=elora.DEFAULT_ROUNDS,
                        ok=len(record["contributions"]), failed=note)
        )  # fmt: skip

    try:
        async with typing(update, context):
            transcript = await elora.council(
                services, question, skills, elora.DEFAULT_ROUNDS, surface="telegram",
                chat_id=str(update.effective_chat.id), on_round=on_round,
            )  # fmt: skip
    except EloraError as exc:
        await progress.edit_text(str(exc)[:4000])
        return
    await send_reply(update, context, transcript["synthesis"]["text"], transcript.get("trace_id"))
