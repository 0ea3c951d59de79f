"""The memory operations (remember, confirm, save, search, forget, session context) under the names
the model tools also use; the front door (core.app) and the tools call them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.ids import memory_uuid
from core.memory.forget import ForgetReport, forget_entry
from core.memory.schema import KIND_TO_TIER, EntryIn, slug_for, text_key, topics_from_text
from core.memory.tombstones import digest, lift
from core.storage.models import MemoryEntry
from core.undo.context import labelled
from core.undo.log import undoable

if TYPE_CHECKING:
    from core.services import Services

OPERATOR_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Remembered:
    """What a save did: the entry kept, and whether it only confirmed one already kept."""

    entry: MemoryEntry
    confirmed: bool


def remember(services: Services, text: str, **options: Any) -> MemoryEntry:
    """An explicit save by the operator (see remember_or_confirm); returns the entry kept."""
    return remember_or_confirm(services, text, **options).entry


def remember_or_confirm(
    services: Services,
    text: str,
    *,
    kind: str = "fact",
    tier: str | None = None,
    importance: int = 1,
    topics: list[str] | None = None,
    scope: str = "global",
    memory_id: str | None = None,
    sources: list[dict[str, Any]] | None = None,
    attributes: dict[str, Any] | None = None,
) -> Remembered:
    """An explicit save by the operator: fills the strict schema with operator-authority
    defaults; saying a kept memory again confirms it instead of adding a copy. Undoable for
    ELORA_UNDO_MINUTES (core.undo)."""
    with undoable(services, "remember", memory_id or "") as change, labelled("remember"):
        # An explicit save is consent given again (core.memory.tombstones); an undo of it
        # puts the tombstone back.
        buried = digest(services, text)
        if lift(services, text):
            change.lifted.append(buried)
        kept = _remember(services, text, kind=kind, tier=tier, importance=importance,
                         topics=topics, scope=scope, memory_id=memory_id, sources=sources,
                         attributes=attributes)  # fmt: skip
        change.target = change.target or kept.entry.memory_id
    return kept


def _remember(
    services: Services, text: str, *, kind: str, tier: str | None, importance: int,
    topics: list[str] | None, scope: str, memory_id: str | None,
    sources: list[dict[str, Any]] | None, attributes: dict[str, Any] | None,
) -> Remembered:  # fmt: skip
    now = services.clock.now()
    memory_id = memory_id or _free_slug(services, slug_for(kind, text))
    # A plain dict: save() validates it and turns a bad field into InvalidInput (one clear line).
    entry = dict(
        memory_id=memory_id,
        tier=tier or KIND_TO_TIER.get(kind, "semantic"),
        kind=kind,
        canonical_text=text,
        truth_mode="asserted",
        scope=scope,
        importance=importance,
        confidence=OPERATOR_CONFIDENCE,
        observations=1,
        topics=topics or topics_from_text(text),
        last_touched=now,
        valid_from=now if kind == "event" else None,
        sources=sources or [{"surface": "cli", "origin": "operator", "date": now.isoformat()}],
        attributes=attributes or {},
    )
    return save_or_confirm(services, entry)


def save_or_confirm(services: Services, entry: EntryIn | dict[str, Any]) -> Remembered:
    """Save an entry, unless the same memory is kept already: the same text (up to case,
    accents and punctuation), active, in the same scope and tier, under this memory_id or a new
    one. Then it is confirmed instead. Every path that writes what the operator said (remember,
    /remember, approving a proposal) goes through here, so none makes copies."""
    data = entry.model_dump() if isinstance(entry, EntryIn) else entry
    text, scope = str(data.get("canonical_text") or ""), str(data.get("scope") or "global")
    tier = str(data.get("tier") or "")
    existing = services.memory.get(str(data.get("memory_id") or ""))
    if existing is None:
        existing = services.memory.with_same_text(text, scope, tier)
    same = (
        existing is not None
        and existing.status == "active"
        and (existing.scope, existing.tier) == (scope, tier)
        and text_key(existing.canonical_text) == text_key(text)
    )
    if not same:
        return Remembered(services.memory.save(entry), False)
    kept = confirm_entry(services, existing, data.get("sources") or [],
                         importance=int(data.get("importance") or 1))  # fmt: skip
    return Remembered(kept, True)


def confirm_entry(
    services: Services, entry: MemoryEntry, sources: list[dict[str, Any]], importance: int = 1
) -> MemoryEntry:
    """A memory said again: one more observation, a little more confidence, fresher, its new
    sources added (and the higher importance, if this time it was given one)."""
    data = entry.model_dump(exclude={"rowid", "uuid", "created_at", "vector_state"})
    data["observations"] = entry.observations + 1
    data["confidence"] = round(entry.confidence + (1 - entry.confidence) * 0.25, 4)
    data["last_touched"] = services.clock.now()
    data["sources"] = [*entry.sources, *(s for s in sources if s not in entry.sources)]
    data["importance"] = max(entry.importance, importance)
    with labelled("confirm"):
        return services.memory.save(data)


def _free_slug(services: Services, base: str) -> str:
    """`base`, or `base-2`, `base-3`... so an explicit save never overwrites another memory."""
    candidate, n = base, 1
    while services.memory.by_uuids([memory_uuid(candidate)]):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def save_memory(services: Services, entry: EntryIn | dict[str, Any]) -> MemoryEntry:
    """Validate and upsert an entry (same memory_id → same uuid → replaced)."""
    return services.memory.save(entry)


def search_memory(
    services: Services, query: str, limit: int = 5, *, scopes: list[str] | None = None,
    tiers: list[str] | None = None, statuses: tuple[str, ...] = ("active",),
) -> list[dict[str, Any]]:  # fmt: skip
    """Hybrid search reranked by cosine × importance weight; items carry tier and meaning."""
    from core.memory.schema import TIER_MEANING

    hits, degraded = services.memory.search(
        query, limit, scopes=scopes, tiers=tiers, statuses=statuses
    )
    return [
        {
            "memory_id": h.entry.memory_id,
            "tier": h.entry.tier,
            "tier_meaning": TIER_MEANING[h.entry.tier],
            "kind": h.entry.kind,
            "text": h.entry.canonical_text,
            "importance": h.entry.importance,
            "confidence": h.entry.confidence,
            "score": h.score,
            "scope": h.entry.scope,
            "topics": h.entry.topics,
            "sources": h.entry.sources,
            "degraded": degraded,
        }
        for h in hits
    ]


# The relevance cut-off of a listed search (`elora memories --search`): a hit is shown when its
# score reaches SEARCH_FLOOR and SEARCH_SHARE of the best hit's. Chosen with
# tests/bench/bench_search_floor.py (bundled e5): recall 0.95, precision 0.51 against 0.09
# uncut; floors past 0.5 start hiding right answers that share no word with the query.
SEARCH_FLOOR = 0.45
SEARCH_SHARE = 0.6


@dataclass(frozen=True)
class Ranked:
    """Search hits above the relevance cut-off, and how many fell below it."""

    hits: list[Any]
    degraded: bool
    below: int


def search_ranked(
    services: Services, query: str, limit: int = 20, *, scopes: list[str] | None = None,
    tiers: list[str] | None = None, statuses: tuple[str, ...] = ("active",),
    floor: float = SEARCH_FLOOR,
) -> Ranked:  # fmt: skip
    """Entries ranked by score (cosine × importance weight, plus a lexical share), without
    those below the relevance floor. Lexical-only (degraded) scores are relative, so then
    every word match stays."""
    hits, degraded = services.memory.search(
        query, limit, scopes=scopes, tiers=tiers, statuses=statuses
    )
    if degraded or not hits or floor <= 0:
        return Ranked(hits, degraded, 0)
    cut = max(floor, SEARCH_SHARE * hits[0].score)
    kept = [h for h in hits if h.score >= cut]
    return Ranked(kept, degraded, len(hits) - len(kept))


def list_memory_topics(services: Services, scope: str | None = "global") -> list[dict[str, Any]]:
    """memory_id, tier, topics and importance of active entries of a scope."""
    return services.memory.topics(scope)


def forget_memory(services: Services, memory_id: str, with_sources: bool = False) -> ForgetReport:
    """Erase an entry from every store (and its source messages when asked); irreversible."""
    return forget_entry(services, memory_id, with_sources=with_sources)


def save_session_context(
    services: Services, text: str, source_id: str, *, user_id: str, chat_id: str
) -> int:
    """Index a large input in session memory under its source_id; return the chunk count."""
    return services.session_memory.save(user_id, chat_id, source_id, text)


def search_session_context(
    services: Services, source_id: str, query: str, *, user_id: str, chat_id: str, limit: int = 5
) -> list[dict[str, Any]]:
    """Chunks of one session source scoring above the threshold."""
    hits = services.session_memory.search(user_id, chat_id, source_id, query, limit)
    return [
        {"source_id": h.source_id, "position": h.position, "text": h.text, "score": h.score}
        for h in hits
    ]


def entry_json(entry: MemoryEntry) -> dict[str, Any]:
    """An entry as plain data (for `--json` listings and exports)."""
    data = entry.model_dump(exclude={"rowid"})
    for key in ("valid_from", "valid_to", "created_at", "last_touched"):
        if data.get(key) is not None:
            data[key] = data[key].isoformat()
    return data
