"""How Elora is doing: the status line, the health report (`elora doctor` and the cockpit's
Health screen), the per-tier audit, and recent requests with what they cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.doctor import Report

if TYPE_CHECKING:
    from core.services import Services
    from core.storage.models import Trace


def status(services: Services) -> dict[str, Any]:
    """Today's spend and cap, the model serving each tier, the spool backlog, open proposals."""
    from core.routing.tiers import MODEL_TIERS, resolve

    settings = services.settings
    models = {}
    for tier in MODEL_TIERS:
        spec = resolve(settings, tier)
        models[tier] = spec.model if spec else None
    return {
        "spend": services.traces.spent_today(),
        "cap": settings.daily_spend_cap,
        "models": models,
        "spool": services.spool.backlog(),
        "proposals": services.proposals.count(),
    }


def health(services: Services, probe: bool = True) -> Report:
    """Every check (configuration, database, spool, embedder, vectors), what is stored, sizes,
    jobs, the capability profile and spend; `probe` False skips the costly checks (an
    embedding, a walk over the vector store). Never raises: what fails is in the report."""
    from core.doctor import run_checks

    return run_checks(services, probe=probe)


def audit(services: Services) -> dict[str, Any]:
    """The per-tier scorecard: entries, schema compliance, staleness, queue, promotions."""
    from core.audit import audit as scorecard

    return scorecard(services)


def recent_traces(services: Services, limit: int = 50, chat_id: str | None = None) -> list[Trace]:
    """The latest requests, newest first."""
    return services.traces.recent(limit, chat_id=chat_id)


def trace_rows(
    services: Services, limit: int = 30, chat_id: str | None = None
) -> list[dict[str, Any]]:
    """The latest requests as listing rows (models as the escalation path, e.g. LITE→FLASH)."""
    from core.traces import trace_row

    return [trace_row(t) for t in services.traces.recent(limit, chat_id=chat_id)]


def spent_today(services: Services) -> float:
    """What the requests of today cost."""
    return services.traces.spent_today()


def daily_activity(services: Services, days: int = 14) -> list[dict[str, Any]]:
    """Requests and spend per day over the last `days` days."""
    return services.traces.daily(days)


def record_trace(services: Services, **fields: Any) -> Trace:
    """Store the trace of a call a surface made on its own (secrets redacted)."""
    return services.traces.record(**fields)
