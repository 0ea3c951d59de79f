"""Distilling the active chat for experts (MODEL_DISTILLATION), bounded by history_depth."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.errors import EloraError
from core.prompts import render

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)
NO_CONTEXT = "(no prior conversation in this chat)"


async def distill_chat(
    services: Services,
    surface: str,
    chat_id: str | None,
    history_depth: int | None = None,
    focus: str | None = None,
    usage: list | None = None,
) -> str:
    """A short summary of the chat's recent turns (with the window summary), or a placeholder."""
    if chat_id is None:
        return NO_CONTEXT
    window = services.window(surface, chat_id)
    turns = window.turns()
    if history_depth is not None:
        turns = turns[-history_depth:] if history_depth > 0 else []
    earlier = window.summary()
    if not turns and not earlier:
        return NO_CONTEXT
    if earlier:
        turns = [{"role": "summary", "content": earlier}, *turns]
    prompt = render("distillation", turns=turns, focus=focus)
    try:
        completion = await services.llm.complete(
            services.settings.model_distillation, [{"role": "user", "content": prompt}]
        )
    except EloraError as exc:
        log.warning("chat distillation failed, using the raw tail: %s", exc)
        return "\n".join(f"{t['role']}: {t['content'][:300]}" for t in turns[-6:])
    if usage is not None:
        usage.append(completion.record())
    return (completion.text or "").strip() or NO_CONTEXT
