"""Model tiers (LITE, FLASH, PRO: how strong a model answers, not a memory tier) and which
LiteLLM model string serves each."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.config import Settings

MODEL_TIERS = ("LITE", "FLASH", "PRO")
RANK = {tier: n for n, tier in enumerate(MODEL_TIERS)}
# Where an unset tier borrows its model: the next configured one, upwards first.
BORROW_ORDER = {
    "LITE": ("LITE", "FLASH", "PRO"),
    "FLASH": ("FLASH", "PRO", "LITE"),
    "PRO": ("PRO", "FLASH", "LITE"),
}
ESCALATIONS = {"LITE": ("FLASH", "PRO"), "FLASH": ("PRO",), "PRO": ()}

HOW_TO_CONFIGURE = (
    "No language model is configured. Set at least ELORA_MODEL_LITE to a LiteLLM model string, "
    "e.g. ELORA_MODEL_LITE=gemini/gemini-2.5-flash-lite with GEMINI_API_KEY, or a local server: "
    "ELORA_MODEL_LITE=openai/qwen3 ELORA_LLM_API_BASE=http://127.0.0.1:8080/v1. "
    "Memory, import, search and review keep working without a model."
)


@dataclass(frozen=True)
class ModelSpec:
    """The model serving a tier, where it lives, and what to try when it fails."""

    tier: str
    model: str
    api_base: str | None = None
    fallbacks: tuple[str, ...] = field(default_factory=tuple)
    borrowed_from: str | None = None


def can_escalate(source: str, target: str) -> bool:
    """LITE → FLASH or PRO; FLASH → PRO; nothing else."""
    return target in ESCALATIONS.get(source, ())


def higher(tier: str) -> str:
    """The next tier up (PRO stays PRO)."""
    return MODEL_TIERS[min(RANK[tier] + 1, len(MODEL_TIERS) - 1)]


def resolve(settings: Settings, tier: str) -> ModelSpec | None:
    """The spec serving `tier`, borrowing the next configured tier's model when it is unset."""
    tier = tier.upper()
    if tier not in RANK:
        # A literal model string (e.g. a synthesis model) rather than a tier name.
        return ModelSpec(tier=tier, model=tier, api_base=settings.llm_api_base)
    for source in BORROW_ORDER[tier]:
        model = getattr(settings, f"model_{source.lower()}")
        if model:
            api_base = (
                getattr(settings, f"model_{source.lower()}_api_base") or settings.llm_api_base
            )
            return ModelSpec(
                tier=tier,
                model=model,
                api_base=api_base,
                fallbacks=tuple(settings.fallbacks(source)),
                borrowed_from=None if source == tier else source,
            )
    return None


def configured(settings: Settings) -> bool:
    """Whether any tier has a model."""
    return any(getattr(settings, f"model_{t.lower()}") for t in MODEL_TIERS)
