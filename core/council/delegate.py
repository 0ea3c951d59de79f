"""delegate_to_subagent: a stateful agentic loop with the memory tools, its own call budget and
LITE→FLASH→PRO escalation; it asks the caller with `QUESTION:` instead of guessing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.council.threads import open_thread, save_thread
from core.prompts import render
from core.routing.loop import Router
from core.routing.tools import ToolBox, ToolContext

if TYPE_CHECKING:
    from core.services import Services

QUESTION_PREFIX = "QUESTION:"


async def delegate_to_subagent(
    services: Services,
    task: str,
    system_prompt: str | None = None,
    sub_sid: str | None = None,
    *,
    chat_id: str = "cli",
    surface: str = "cli",
    user_id: str | None = None,
    budget: int | None = None,
    start_tier: str = "LITE",
) -> dict[str, Any]:
    """Run (or resume, answering its question) a sub-agent on a task."""
    thread = open_thread(
        services, "subagent", chat_id, (system_prompt or "sub-agent")[:60], sub_sid
    )
    history = list(thread.messages)
    history.append({"role": "user", "content": task})
    system = render("subagent", instructions=system_prompt or "", question_prefix=QUESTION_PREFIX)
    context = ToolContext(services, surface, chat_id, user_id, operator_text="")
    router = Router(services.llm, ToolBox(context), services.spend,
                    budget if budget is not None else services.settings.subagent_call_budget)  # fmt: skip
    messages = [{"role": "system", "content": system}, *history]
    result = await router.run(start_tier, messages)
    text = result.text.strip()
    history.append({"role": "assistant", "content": text})
    asking = text.upper().startswith(QUESTION_PREFIX)
    save_thread(services, thread, history, text)
    services.traces.record(
        surface="subagent", chat_id=chat_id, models=result.calls, escalations=result.escalations,
        tool_calls=result.tool_calls, tokens_in=result.tokens_in, tokens_out=result.tokens_out,
        cost=result.cost, classification={"intent": "subagent", "sub_sid": thread.id},
    )  # fmt: skip
    out: dict[str, Any] = {
        "sub_sid": thread.id,
        "status": "question" if asking else "done",
        "tier": result.tier,
        "tool_calls": len(result.tool_calls),
        "budget_exhausted": result.budget_exhausted,
        "escalations": result.escalations,
    }
    if asking:
        out["question"] = text[len(QUESTION_PREFIX) :].strip()
    else:
        out["answer"] = text
    return out
