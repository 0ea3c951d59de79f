"""Fading: low-importance episodic entries age out unless they are used or confirmed.

An episodic entry of importance 1-3 lives

    lifetime = BASE_DAYS × 2^(importance − 1) × (1 + recalls) × (1 + confirmations)

days (30, 60 or 120 to start with; every evidence pack it reached and every confirmation
— observations beyond the first — add as much again), counted from its latest sign of life:
written or confirmed (`last_touched`), recalled into a pack, or restored. Past it, the `fade`
job archives it: status `faded`, out of recall, nothing deleted, the reason kept in its
attributes. `elora memories restore ID` (or `u` on the cockpit's Memory screen) brings it back
with a fresh lifetime. Importance 4-5 (key facts, axioms) and the other tiers never fade.

Recalls are read from the traces (each one lists its pack's item ids) and counted into
`entry_recalls` by the job, so the request path writes nothing more.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.errors import EloraError, InvalidInput
from core.ids import memory_uuid
from core.memory import recalls
from core.memory.entries import MemoryStore
from core.storage import meta
from core.storage.db import from_db_time
from core.storage.models import MemoryEntry
from core.undo.context import labelled
from core.undo.log import undoable

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

BASE_DAYS = 30
FADING_TIERS = ("episodic",)
MAX_FADING_IMPORTANCE = 3
SOON_DAYS = 14  # "fading soon" in the cockpit and the audit
WATERMARK = "fading:traces_rowid"


@dataclass(frozen=True)
class Lifetime:
    """When an entry fades, and the figures that decided it."""

    memory_id: str
    importance: int
    recalls: int
    confirmations: int
    since: datetime
    since_what: str  # written or confirmed | recalled | restored
    days: int
    fades_at: datetime

    def reason(self) -> str:
        """The schedule in words, e.g. for the cockpit and the audit."""
        parts = [f"importance {self.importance}: {BASE_DAYS * 2 ** (self.importance - 1)} d"]
        if self.recalls:
            parts.append(f"× {1 + self.recalls} ({self.recalls} recall{'s' * (self.recalls > 1)})")
        if self.confirmations:
            n = self.confirmations
            parts.append(f"× {1 + n} ({n} confirmation{'s' * (n > 1)})")
        return (
            f"{' '.join(parts)} = {self.days} days from {self.since:%Y-%m-%d} ({self.since_what})"
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "memory_id": self.memory_id,
            "fades_at": self.fades_at.isoformat(),
            "days": self.days,
            "importance": self.importance,
            "recalls": self.recalls,
            "confirmations": self.confirmations,
            "since": self.since.isoformat(),
            "reason": self.reason(),
        }


def fades(entry: MemoryEntry) -> bool:
    """Whether this kind of entry can fade at all (tier and importance)."""
    return entry.tier in FADING_TIERS and entry.importance <= MAX_FADING_IMPORTANCE


def lifetime(
    entry: MemoryEntry, recalls: int = 0, last_recalled: datetime | None = None
) -> Lifetime | None:
    """The entry's fading schedule, or None when it never fades."""
    if not fades(entry):
        return None
    confirmations = max(0, entry.observations - 1)
    days = BASE_DAYS * 2 ** (max(1, entry.importance) - 1) * (1 + recalls) * (1 + confirmations)
    since, what = entry.last_touched, "written or confirmed"
    if last_recalled is not None and last_recalled > since:
        since, what = last_recalled, "last recalled"
    restored = (entry.attributes or {}).get("restored_at")
    if restored and datetime.fromisoformat(restored) > since:
        since, what = datetime.fromisoformat(restored), "restored"
    return Lifetime(entry.memory_id, entry.importance, recalls, confirmations, since, what,
                    days, since + timedelta(days=days))  # fmt: skip


# -- recalls -------------------------------------------------------------------------------


def _watermark(services: Services) -> int:
    return int(meta.get(services.db, WATERMARK) or 0)


def _new_recalls(services: Services, after: int) -> tuple[dict[str, tuple[int, datetime]], int]:
    """Recalls recorded by traces after rowid `after`: {uuid: (count, last)}, and the last rowid."""
    # Bounded: a trace stored meanwhile is left for the next run, not skipped.
    items, last = services.traces.pack_items_after(after)
    found: dict[str, tuple[int, datetime]] = {}
    for created, item_id in items:
        if item_id == "identity" or item_id.startswith("archive:"):
            continue
        uuid = memory_uuid(item_id)
        count, seen = found.get(uuid, (0, None))
        at = from_db_time(created)
        found[uuid] = (count + 1, at if seen is None or at > seen else seen)
    return found, last


def recall_counts(services: Services, uuids: list[str]) -> dict[str, tuple[int, datetime | None]]:
    """Recalls of these entries so far: what the job counted plus traces since (read-only)."""
    if not uuids:
        return {}
    stored = recalls.recalls_of(services.db, uuids)
    fresh, _ = _new_recalls(services, _watermark(services))
    out = {}
    for u in uuids:
        n, at = stored.get(u, (0, None))
        more, later = fresh.get(u, (0, None))
        out[u] = (n + more, max((t for t in (at, later) if t), default=None))
    return out


def count_recalls(services: Services) -> int:
    """Fold the recalls of traces recorded since the last run into `entry_recalls`."""
    after = _watermark(services)
    fresh, last = _new_recalls(services, after)
    known = set(services.memory.by_uuids(list(fresh)))  # archive chunks and forgotten ids aside
    counted = {u: counts for u, counts in fresh.items() if u in known}
    recalls.add_recalls(services.db, counted, (WATERMARK, str(last)))
    return sum(n for u, (n, _) in fresh.items() if u in known)


# -- schedule ------------------------------------------------------------------------------


def _candidates(services: Services) -> list[MemoryEntry]:
    return recalls.fadeable(services.db, FADING_TIERS, MAX_FADING_IMPORTANCE)


def schedule(services: Services, within_days: float | None = None) -> list[Lifetime]:
    """Active entries that will fade, soonest first (only those due within `within_days`)."""
    entries = _candidates(services)
    counts = recall_counts(services, [e.uuid for e in entries])
    horizon = None
    if within_days is not None:
        horizon = services.clock.now() + timedelta(days=within_days)
    out = []
    for e in entries:
        life = lifetime(e, *counts.get(e.uuid, (0, None)))
        if life is not None and (horizon is None or life.fades_at <= horizon):
            out.append(life)
    return sorted(out, key=lambda life: life.fades_at)


def fade_due(services: Services) -> dict[str, Any]:
    """The `fade` job: count new recalls, then archive every entry past its lifetime."""
    counted = count_recalls(services)
    now = services.clock.now()
    due = {life.memory_id: life for life in schedule(services, within_days=0)}
    reasons = {memory_id: life.reason() for memory_id, life in due.items()}
    rows = recalls.mark_faded(services.db, reasons, now)
    _refresh_vectors(services, rows)
    faded = sorted(r.memory_id for r in rows)
    return {
        "recalls_counted": counted,
        "faded": len(faded),
        "faded_ids": faded,
        "due_soon": len(schedule(services, within_days=SOON_DAYS)),
    }


def _refresh_vectors(services: Services, rows: list[MemoryEntry]) -> None:
    """Give the vector store the faded status (recall filters on it), reusing the stored
    vectors: the text did not change, so nothing is embedded again. Left `pending` when the
    store cannot answer; the index-pending job finishes it."""
    if not rows:
        return
    try:
        stored = services.vectors.get_vectors("memory", [r.uuid for r in rows])
        kept = [r for r in rows if r.uuid in stored]
        if kept:
            services.vectors.upsert(
                "memory", [r.uuid for r in kept], [stored[r.uuid] for r in kept],
                [MemoryStore.vector_meta(r) for r in kept],
            )  # fmt: skip
            recalls.mark_indexed(services.db, [r.uuid for r in kept])
        services.memory.index([r for r in rows if r.uuid not in stored])  # never embedded
    except EloraError as exc:
        log.warning("faded entries wait for their vectors' status: %s", exc)


def restore(services: Services, memory_id: str) -> MemoryEntry:
    """Bring a faded entry back to recall, with a fresh lifetime from now."""
    entry = services.memory.require(memory_id)
    if entry.status != "faded":
        raise InvalidInput(f"{memory_id} is {entry.status}, not faded")
    attributes = {k: v for k, v in entry.attributes.items() if k not in ("faded_at", "fade_reason")}
    attributes["restored_at"] = services.clock.now().isoformat()
    attributes["restores"] = int(entry.attributes.get("restores", 0)) + 1
    with undoable(services, "unfade", memory_id), labelled("unfade"):
        return services.memory.set_status(memory_id, "active", attributes=attributes)


def figures(services: Services) -> dict[str, Any]:
    """For the audit: due soon, faded (all, and this week), restored this week, the next few."""
    week_ago = services.clock.now() - timedelta(days=7)
    soon = schedule(services, within_days=SOON_DAYS)
    faded, faded_week, restored_week = recalls.fading_counts(services.db, week_ago)
    return {
        "policy": f"episodic, importance ≤ {MAX_FADING_IMPORTANCE}: {BASE_DAYS} d × "
        "2^(importance−1) × (1 + recalls) × (1 + confirmations)",
        "due_soon": len(soon),
        "due_within_days": SOON_DAYS,
        "faded": faded,
        "faded_7d": faded_week,
        "restored_7d": restored_week,
        "next": [life.to_json() for life in soon[:5]],
    }
