"""The LLM client: one LiteLLM call per attempt, fallbacks in order, tokens and cost recorded.

Fallbacks are handled here rather than by LiteLLM's Router so that every attempt is visible in
the trace and no cooldown state hides a provider's recovery. LiteLLM is imported on first call.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from core.config import Settings
from core.errors import NoModelConfigured, ProviderError
from core.offload import run_blocking, waiting_elsewhere
from core.routing.tiers import HOW_TO_CONFIGURE, ModelSpec, resolve

if TYPE_CHECKING:
    from core.routing.spend import SpendGuard

log = logging.getLogger(__name__)

# Every call made while a request is handled lands here, so the request's trace counts the
# classifier, distillation and learning calls too, not only the answer's.
CALLS: ContextVar[list[dict[str, Any]] | None] = ContextVar("elora_llm_calls", default=None)


def traced_separately(fn):
    """For operations that record their own trace (council, expert, sub-agent): their calls
    stay out of the enclosing request's trace, so spend is never counted twice."""

    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        token = CALLS.set(None)
        try:
            return await fn(*args, **kwargs)
        finally:
            CALLS.reset(token)

    return wrapper


@dataclass(frozen=True)
class ToolCall:
    """A function call requested by the model (arguments still raw JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass
class Completion:
    """One model answer and what it cost."""

    tier: str
    model: str
    text: str | None
    tool_calls: list[ToolCall]
    tokens_in: int
    tokens_out: int
    cost: float | None
    latency_ms: int
    attempts: list[dict[str, Any]] = field(default_factory=list)
    tools_offered: bool = False

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text or ""}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return msg

    def record(self) -> dict[str, Any]:
        """What the trace keeps of this call."""
        return {
            "tier": self.tier,
            "model": self.model,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": self.cost,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "tools_offered": self.tools_offered,
        }


class ModelClient(Protocol):
    """What callers need from a model client: one completion (tools optional), plain text, and
    the context size of a tier's model. LLMClient calls LiteLLM; tests may use a scripted one."""

    async def complete(
        self,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
    ) -> Completion: ...

    async def complete_text(self, tier: str, messages: list[dict[str, Any]]) -> str: ...

    def context_tokens(self, tier: str) -> int: ...


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def _short(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    return f"{kind} {status}" if status else kind


class LLMClient:
    """Calls the model serving a tier, falling back through its configured alternatives."""

    def __init__(self, settings: Settings, spend: SpendGuard | None = None):
        self.settings = settings
        # When set, no call of any kind (answer, classifier, distillation, extraction) leaves
        # once today's spending cap forbids it: SpendingCapReached is raised instead.
        self.spend = spend
        self._context_sizes: dict[str, int] = {}

    def spec(self, tier: str) -> ModelSpec:
        """The model spec for a tier, or NoModelConfigured explaining how to set one."""
        spec = resolve(self.settings, tier)
        if spec is None:
            raise NoModelConfigured(HOW_TO_CONFIGURE)
        return spec

    def context_tokens(self, tier: str) -> int:
        """The context size of the tier's model (LiteLLM's price map; configured default else)."""
        spec = self.spec(tier)
        known = self._context_sizes.get(spec.model)
        if known is not None:
            return known
        try:
            info = _litellm().get_model_info(spec.model)
            size = int(info.get("max_input_tokens") or self.settings.model_context_tokens)
        except Exception:  # unknown (local) models are normal: use the configured size
            size = self.settings.model_context_tokens
        self._context_sizes[spec.model] = size  # LiteLLM's map does not change while we run
        return size

    async def complete(
        self,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """Ask the tier's model (then each fallback) once; ProviderError when all fail."""
        spec = self.spec(tier)
        if self.spend is not None and self.settings.daily_spend_cap is not None:
            await run_blocking(self.spend.check, spec.tier)  # reads today's spend
        # The first import takes seconds: off the event loop, so other chats go on meanwhile.
        litellm = _litellm() if "litellm" in sys.modules else await run_blocking(_litellm)
        key = self.settings.llm_api_key
        attempts: list[dict[str, Any]] = []
        started = time.perf_counter()
        for model in (spec.model, *spec.fallbacks):
            for attempt in range(1 + self.settings.llm_retries):
                kwargs: dict[str, Any] = {
                    "model": model,
                    "messages": messages,
                    "timeout": self.settings.llm_timeout_seconds,
                    "num_retries": 0,
                    "max_retries": 0,
                }
                if spec.api_base:
                    kwargs["api_base"] = spec.api_base
                if key is not None:
                    kwargs["api_key"] = key.get_secret_value()
                if tools:
                    kwargs["tools"] = tools
                if temperature is not None:
                    kwargs["temperature"] = temperature
                try:
                    async with waiting_elsewhere():  # the request's work slot is free meanwhile
                        response = await litellm.acompletion(**kwargs)
                except Exception as exc:
                    attempts.append({"model": model, "error": _short(exc)})
                    log.warning("model %s failed (%s)", model, _short(exc))
                    if _retryable(exc) and attempt < self.settings.llm_retries:
                        continue
                    break
                attempts.append({"model": model, "ok": True})
                completion = self._completion(spec.tier, model, response, attempts, started)
                completion.tools_offered = bool(tools)
                sink = CALLS.get()
                if sink is not None:
                    sink.append(completion.record())
                return completion
        tried = ", ".join(f"{a['model']}: {a.get('error')}" for a in attempts)
        raise ProviderError(f"the {spec.tier} model is unavailable right now ({tried})")

    async def complete_text(self, tier: str, messages: list[dict[str, Any]]) -> str:
        """Plain text answer (the TextModel protocol used by classifier and jobs)."""
        return (await self.complete(tier, messages)).text or ""

    def _completion(self, tier, model, response, attempts, started) -> Completion:
        message = response.choices[0].message
        calls = [
            ToolCall(c.id, c.function.name, c.function.arguments or "{}")
            for c in (getattr(message, "tool_calls", None) or [])
        ]
        usage = getattr(response, "usage", None)
        return Completion(
            tier=tier,
            model=model,
            text=message.content,
            tool_calls=calls,
            tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
            tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
            cost=_cost(response),
            latency_ms=int((time.perf_counter() - started) * 1000),
            attempts=attempts,
        )


def _cost(response) -> float | None:
    """The call's cost in USD, or None when the model is outside LiteLLM's price map."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:  # LiteLLM priced the call already (milliseconds saved)
        cost = hidden["response_cost"]
        return None if cost is None else float(cost)
    try:
        return float(_litellm().completion_cost(completion_response=response))
    except Exception:  # a model outside LiteLLM's price map: its cost is unknown
        return None


def _retryable(exc: Exception) -> bool:
    """Server errors and dropped connections get a retry; rate limits and timeouts fall back."""
    status = getattr(exc, "status_code", None)
    if status == 429 or type(exc).__name__ in ("Timeout", "RateLimitError"):
        return False
    return status is None or status >= 500


def parse_arguments(call: ToolCall) -> dict[str, Any]:
    """A tool call's arguments as a dict, or ValueError with a readable reason."""
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    return value
