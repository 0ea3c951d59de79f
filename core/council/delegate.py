"""delegate_to_subagent: a stateful agentic loop with the memory tools, its own call budget and
LITE→FLASH→PRO escalation; it asks the caller with `QUESTION:` instead of guessing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.council.threads import open_thread, save_thread
from core.errors import EloraError
from core.prompts import render
from core.routing.client import traced_separately
from core.routing.loop import Router
from core.routing.tools import ToolBox, ToolContext

if TYPE_CHECKING:
    from core.services import Services

QUESTION_PREFIX = "QUESTION:"


@traced_separately
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
    # The caller's instructions are kept with the thread: answering a QUESTION: by sub_sid
    # alone must not leave the sub-agent without them.
    kept = next((m["content"] for m in thread.messages if m["role"] == "system"), "")
    instructions = system_prompt if system_prompt is not None else kept
    history = [m for m in thread.messages if m["role"] != "system"]
    history.append({"role": "user", "content": task})
    system = render("subagent", instructions=instructions, question_prefix=QUESTION_PREFIX)
    context = ToolContext(services, surface, chat_id, user_id, operator_text="")
    router = Router(services.llm, ToolBox(context), services.spend,
                    budget if budget is not None else services.settings.subagent_call_budget)  # fmt: skip
    messages = [{"role": "system", "content": system}, *history]
    try:
        result = await router.run(start_tier, messages)
    except EloraError as exc:
        # The calls already made were paid for: trace them so they count against the cap.
        if router.result.calls:
            _trace(services, chat_id, router.result, thread.id, f"{type(exc).__name__}: {exc}")
        raise
    text = result.text.strip()
    history.append({"role": "assistant", "content": text})
    asking = text.upper().startswith(QUESTION_PREFIX)
    kept_messages = [{"role": "system", "content": instructions}] if instructions else []
    save_thread(services, thread, [*kept_messages, *history], text)
    _trace(services, chat_id, result, thread.id)
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


def _trace(services, chat_id, result, sub_sid: str, error: str | None = None) -> None:
    """One "subagent" trace for the delegation's calls."""
    services.traces.record(
        surface="subagent", chat_id=chat_id, models=result.calls, escalations=result.escalations,
        tool_calls=result.tool_calls, tokens_in=result.tokens_in, tokens_out=result.tokens_out,
        cost=result.cost, classification={"intent": "subagent", "sub_sid": sub_sid},
        error=error[:300] if error else None,
    )  # fmt: skip
