"""consult_expert: a 1:1 iterative consultation with one skill, resumable by sub_sid.

The expert works in turns until it writes <FINAL_ANSWER>…</FINAL_ANSWER> or the iteration cap
is reached; the thread (without the system prompt) is kept in SQLite.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.council.distill import distill_chat
from core.council.skills import get_skill
from core.council.threads import open_thread, save_thread
from core.errors import EloraError, InvalidInput
from core.prompts import render
from core.routing.client import traced_separately
from core.routing.loop import usage_totals

if TYPE_CHECKING:
    from core.services import Services

FINAL = re.compile(r"<FINAL_ANSWER>(.*?)(?:</FINAL_ANSWER>|$)", re.S)
DEFAULT_ITERATIONS, MAX_ITERATIONS = 3, 8


@traced_separately
async def consult_expert(
    services: Services,
    role: str,
    prompt: str,
    sub_sid: str | None = None,
    *,
    chat_id: str = "cli",
    surface: str = "cli",
    iterations: int = DEFAULT_ITERATIONS,
    model: str | None = None,
) -> dict[str, Any]:
    """Ask an expert; loop until it gives a final answer; return it with the thread id."""
    skill = get_skill(services, role)
    thread = open_thread(services, "expert", chat_id, skill.skill_id, sub_sid)
    if thread.role != skill.skill_id:
        # Another expert would read a thread it did not write, and the listing would lie.
        raise InvalidInput(
            f"thread {thread.id} is a consultation of {thread.role!r}, not {skill.skill_id!r}; "
            "resume it with that role or leave sub_sid out to open a new one"
        )
    tier = model or services.settings.model_council
    services.spend.check(tier)
    usage: list[dict[str, Any]] = []
    classification = {"intent": "expert", "skill": skill.skill_id, "sub_sid": thread.id}
    try:
        history, answer, final, turns = await _consult(
            services, skill, thread.messages, prompt, tier, iterations, surface, chat_id, usage
        )
    except EloraError as exc:
        # The calls already made were paid for: trace them so they count against the cap.
        if usage:
            _trace(services, chat_id, usage, classification, f"{type(exc).__name__}: {exc}")
        raise
    save_thread(services, thread, history, answer)
    _trace(services, chat_id, usage, classification)
    return {"sub_sid": thread.id, "role": skill.skill_id, "answer": answer, "final": final,
            "iterations": turns, "note": None if final else "iteration cap reached before <FINAL_ANSWER>"}  # fmt: skip


async def _consult(services, skill, messages, prompt, tier, iterations, surface, chat_id, usage):
    """The loop: the expert's turns until <FINAL_ANSWER> or the cap; its calls go to usage."""
    history = list(messages)
    if not history:
        context = await distill_chat(services, surface, chat_id, usage=usage)
        first = render("expert_request", prompt=prompt, context=context)
    else:
        first = render("expert_request", prompt=prompt, context=None)
    history.append({"role": "user", "content": first})
    system = {"role": "system", "content": render("expert", skill=skill)}
    answer, final, turns = "", False, 0
    cap = max(1, min(iterations, MAX_ITERATIONS))
    while turns < cap:
        services.spend.check(tier, running=sum(u["cost"] or 0 for u in usage))
        completion = await services.llm.complete(tier, [system, *history])
        usage.append(completion.record())
        turns += 1
        text = completion.text or ""
        history.append({"role": "assistant", "content": text})
        match = FINAL.search(text)
        if match:
            answer, final = match.group(1).strip(), True
            break
        answer = text
        if turns < cap:
            history.append({"role": "user", "content": render("expert_continue")})
    return history, answer, final, turns


def _trace(services, chat_id, usage, classification, error: str | None = None) -> None:
    """One "expert" trace for the consultation's calls."""
    services.traces.record(
        surface="expert", chat_id=chat_id, models=usage, classification=classification,
        error=error[:300] if error else None, **usage_totals(usage),
    )  # fmt: skip
