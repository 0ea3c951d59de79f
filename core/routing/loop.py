"""The routing loop: call the tier's model with tools, run its tool calls within a budget,
and move to a higher tier when it asks with new_cognitive_level (same request, same pack)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import SpendingCapReached
from core.prompts import render
from core.routing.client import LLMClient
from core.routing.spend import SpendGuard
from core.routing.tiers import can_escalate
from core.routing.tools import ToolBox, dump_result

log = logging.getLogger(__name__)

BUDGET_NOTE = "tool-call budget exhausted for this request: answer now with what you have"


@dataclass
class RouteResult:
    """The final answer of the loop and everything the trace needs."""

    text: str = ""
    tier: str = "LITE"
    calls: list[dict[str, Any]] = field(default_factory=list)
    escalations: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    budget_exhausted: bool = False

    @property
    def tokens_in(self) -> int:
        """Prompt tokens over every call."""
        return usage_totals(self.calls)["tokens_in"]

    @property
    def tokens_out(self) -> int:
        """Completion tokens over every call."""
        return usage_totals(self.calls)["tokens_out"]

    @property
    def cost(self) -> float | None:
        """Known cost of every call; None when no call had a known price."""
        return usage_totals(self.calls)["cost"]


def usage_totals(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """tokens_in, tokens_out and the known cost (None when no call had a price) of model calls."""
    known = [c["cost"] for c in calls if c.get("cost") is not None]
    return {
        "tokens_in": sum(c["tokens_in"] for c in calls),
        "tokens_out": sum(c["tokens_out"] for c in calls),
        "cost": round(sum(known), 8) if known else None,
    }


class Router:
    """Runs one request through the models, starting at a tier."""

    def __init__(self, client: LLMClient, tools: ToolBox, spend: SpendGuard, budget: int):
        self.client = client
        self.tools = tools
        self.spend = spend
        self.budget = budget
        self.result = RouteResult()

    async def run(
        self,
        tier: str,
        messages: list[dict[str, Any]],
        system_for: Callable[[str], str] | None = None,
    ) -> RouteResult:
        """Loop until the model answers without tool calls (or the budget forces it to);
        `system_for(tier)` renders the system prompt again for the model an escalation reaches."""
        # Kept on the router so a caller can still trace (and count the cost of) the calls
        # already made when a later one fails or hits the spending cap.
        self.result = result = RouteResult(tier=tier)
        left = self.budget
        offer_tools = left > 0
        for _ in range(self.budget + 4):
            self.spend.check(result.tier, running=result.cost or 0.0)
            schemas = self.tools.schemas(result.tier) if offer_tools else None
            completion = await self.client.complete(result.tier, messages, tools=schemas)
            result.calls.append(completion.record())
            if not completion.tool_calls:
                result.text = completion.text or ""
                return result
            messages.append(completion.message)
            escalate_to = None
            for call in completion.tool_calls:
                if left <= 0:
                    outcome = {"error": BUDGET_NOTE}
                    result.budget_exhausted = True
                elif call.name == "new_cognitive_level":
                    outcome, escalate_to = self._escalation(result, call)
                else:
                    outcome = await self.tools.run(call)
                left -= 1
                result.tool_calls.append(
                    {"name": call.name, "tier": result.tier, "ok": "error" not in outcome,
                     "error": outcome.get("error")}
                )  # fmt: skip
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": dump_result(outcome)}
                )
            if escalate_to is not None:
                target, plan = escalate_to
                if system_for is not None and messages and messages[0]["role"] == "system":
                    # The model that continues must know its own tier (and whether it may still
                    # escalate); the evidence and the conversation stay as they were.
                    messages[0] = {"role": "system", "content": system_for(target)}
                handover = render("transfer_plan", source=result.tier, target=target, plan=plan)
                messages.append({"role": "system", "content": handover})
                result.escalations.append(
                    {"from": result.tier, "to": target, "plan_chars": len(plan)}
                )
                result.tier = target
            if left <= 0 and offer_tools:
                # Tools are withdrawn; say so, or the model may keep waiting for results.
                offer_tools = False
                result.budget_exhausted = True
                messages.append({"role": "system", "content": BUDGET_NOTE})
        result.budget_exhausted = True
        result.text = result.text or "I could not finish this request within its tool budget."
        return result

    def _escalation(self, result: RouteResult, call):
        try:
            args = self.tools.validate(call)
        except ValueError as exc:
            return {"error": str(exc)}, None
        target = args.target_model
        if not can_escalate(result.tier, target):
            return {
                "error": f"escalation {result.tier}→{target} is not allowed "
                "(LITE→FLASH/PRO and FLASH→PRO only); answer at your level"
            }, None
        try:
            self.spend.check(target, running=result.cost or 0.0)
        except SpendingCapReached as exc:
            return {"error": f"escalation refused: {exc}"}, None
        return {"escalated_to": target, "note": "a stronger model continues this request"}, (
            target,
            args.transfer_plan,
        )
