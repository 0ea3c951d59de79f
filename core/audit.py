"""`elora audit`: the per-tier scorecard of memory health."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.memory.schema import EntryIn
from core.memory.vocabulary import MEMORY_TIERS

if TYPE_CHECKING:
    from core.services import Services

STALE_DAYS = 90


def audit(services: Services) -> dict[str, Any]:
    """Entries, schema compliance, staleness and empty tiers per tier; the proposal queue;
    promotion throughput over 7 days; environment predictions; fading; capability profile
    freshness."""
    from core.learning.environment import figures as environment_figures
    from core.memory.fading import figures as fading_figures

    now = services.clock.now()
    stale_before = (now - timedelta(days=STALE_DAYS)).strftime("%Y-%m-%d %H:%M:%S")
    tiers: dict[str, dict[str, Any]] = {
        t: {
            "entries": 0,
            "active": 0,
            "superseded": 0,
            "deprecated": 0,
            "faded": 0,
            "compliant": 0,
            "stale": 0,
        }
        for t in MEMORY_TIERS
    }
    offset = 0
    while True:
        page = services.memory.list(status=None, limit=1000, offset=offset)
        if not page:
            break
        offset += len(page)
        for e in page:
            card = tiers.setdefault(e.tier, {"entries": 0, "active": 0, "superseded": 0,
                                             "deprecated": 0, "faded": 0, "compliant": 0,
                                             "stale": 0})  # fmt: skip
            card["entries"] += 1
            card[e.status] = card.get(e.status, 0) + 1
            card["compliant"] += _compliant(e)
            card["stale"] += (
                e.status == "active" and e.last_touched.strftime("%Y-%m-%d %H:%M:%S") < stale_before
            )
    for card in tiers.values():
        n = card["entries"]
        card["schema_compliance"] = round(card["compliant"] / n, 3) if n else None
        card["staleness"] = round(card["stale"] / card["active"], 3) if card["active"] else None
    queue = services.proposals.status_counts()
    oldest = services.proposals.oldest_open()
    promoted = services.proposals.status_counts(origin="promotion", since=now - timedelta(days=7))
    profile = services.profile.all()
    oldest_days = None
    if oldest is not None:
        oldest_days = round((now - oldest).total_seconds() / 86400, 1)
    return {
        "generated_at": now.isoformat(),
        "tiers": tiers,
        "empty_tiers": [t for t, c in tiers.items() if c["entries"] == 0],
        "proposals": {
            "pending": queue.get("pending", 0),
            "recommended": queue.get("recommended", 0),
            "rejected": queue.get("rejected", 0),
            "approved": queue.get("approved", 0),
            "oldest_open_days": oldest_days,
        },
        "promotion_7d": {
            "proposed": sum(promoted.values()),
            "approved": promoted.get("approved", 0),
        },
        "environment": environment_figures(services),
        "fading": fading_figures(services),
        "capability_profile": {
            "dimensions": len(profile),
            "stale": [p["dimension"] for p in profile if p["stale"]],
            "entries": profile,
        },
    }


def _compliant(entry) -> bool:
    """Whether a stored row still satisfies the strict entry schema."""
    try:
        EntryIn.model_validate(
            entry.model_dump(exclude={"rowid", "uuid", "created_at", "vector_state"})
        )
    except ValidationError:
        return False
    return True
