"""Memory: remember, find and browse entries, topics, forget (by id, with its messages, by
phrase, or only a preview), and the evidence pack a question gets."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.errors import InvalidInput
from core.memory.api import SEARCH_FLOOR, Ranked, Remembered
from core.memory.fading import SOON_DAYS, Lifetime
from core.memory.forget import ForgetReport
from core.memory.versions import Version
from core.memory.vocabulary import STATUSES

if TYPE_CHECKING:
    from core.memory.copies import ErasePlan
    from core.pipeline import Request
    from core.recall.pack import EvidencePack
    from core.services import Services
    from core.storage.models import EntryLink, MemoryEntry

log = logging.getLogger(__name__)


def remember(
    services: Services,
    text: str,
    *,
    kind: str | None = "fact",
    tier: str | None = None,
    importance: int = 1,
    topics: list[str] | None = None,
    scope: str = "global",
    memory_id: str | None = None,
    said: Request | None = None,
) -> Remembered:
    """An explicit save by the operator, approved by definition; saying a kept memory again
    confirms it. `kind` None: guessed from the text. `said`: the command message, archived
    verbatim (unless its chat is private) and cited as the memory's source."""
    from core.learning.heuristics import guess_kind
    from core.memory.api import remember_or_confirm

    sources = None
    if said is not None:
        capture_id = _archive_command(services, said)
        sources = services.archive.sources([capture_id]) if capture_id else None
    return remember_or_confirm(
        services, text, kind=kind or guess_kind(text), tier=tier, importance=importance,
        topics=topics, scope=scope, memory_id=memory_id, sources=sources,
    )  # fmt: skip


def _archive_command(services: Services, said: Request) -> str | None:
    """Archive a command message verbatim (unless its chat is private); its capture id."""
    from core.archive.records import CaptureIn

    if said.private or services.chats.is_private(said.surface, said.chat_id):
        return None
    item = CaptureIn(
        surface=said.surface, chat_id=said.chat_id, text=said.text,
        sent_at=said.sent_at or services.clock.now(), user_id=said.user_id,
        message_id=said.message_id, sender=said.sender, kind="command",
        operator=services.settings.is_operator(said.user_id),
    )  # fmt: skip
    return services.archive.capture(item).id


def get_memory(services: Services, memory_id: str) -> MemoryEntry | None:
    """The entry with exactly this memory_id, or None."""
    return services.memory.get(memory_id)


def find_memory(services: Services, words: str, limit: int = 5) -> list[MemoryEntry]:
    """Active entries matching some words, best first (hybrid search)."""
    hits, _ = services.memory.search(words, limit=limit)
    return [h.entry for h in hits]


@dataclass(frozen=True)
class MemoryPage:
    """A page of entries, how many match in all, whether search ran without vectors, and
    when the entries of a fading view fade (by memory_id)."""

    entries: list[MemoryEntry]
    total: int
    degraded: bool = False
    fades: dict[str, datetime] = field(default_factory=dict)


def browse_memory(
    services: Services,
    *,
    text: str = "",
    mode: str = "semantic",
    tier: str | None = None,
    status: str | None = "active",
    scope: str | None = None,
    topic: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> MemoryPage:
    """Entries by tier, scope, topic and status (a page, most recently touched first), or the
    ones matching `text`: `semantic` (hybrid) or `full-text` search, one page of results."""
    memory = services.memory
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)} or all")
    if not text:
        rows = memory.list(tier=tier, scope=scope, topic=topic, status=status, limit=limit,
                           offset=offset)  # fmt: skip
        return MemoryPage(rows, memory.count(status, tier=tier, scope=scope, topic=topic))
    degraded = False
    if mode == "semantic":
        hits, degraded = memory.search(
            text, limit, statuses=(status,) if status else STATUSES,
            tiers=[tier] if tier else None, scopes=[scope] if scope else None,
        )  # fmt: skip
        rows = [h.entry for h in hits]
    else:
        rows = [e for e in memory.fulltext(text, limit, status)
                if (not tier or e.tier == tier) and (not scope or e.scope == scope)]  # fmt: skip
    if topic:
        rows = [e for e in rows if topic.lower() in e.topics]
    return MemoryPage(rows, len(rows), degraded)


def search_ranked(
    services: Services, query: str, limit: int = 20, *, status: str | None = "active",
    tier: str | None = None, scope: str | None = None, floor: float | None = None,
) -> Ranked:  # fmt: skip
    """Entries ranked by relevance, those under the cut-off left out (`floor` None: the
    default SEARCH_FLOOR; 0 keeps every hit), and how many were."""
    from core.memory.api import search_ranked as ranked

    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)} or all")
    return ranked(
        services, query, limit, scopes=[scope] if scope else None, tiers=[tier] if tier else None,
        statuses=(status,) if status else STATUSES,
        floor=SEARCH_FLOOR if floor is None else floor,
    )  # fmt: skip


def fading_soon(
    services: Services, *, tier: str | None = None, scope: str | None = None,
    topic: str | None = None,
) -> MemoryPage:  # fmt: skip
    """Active entries due to fade within SOON_DAYS, soonest first, with when each fades."""
    from core.ids import memory_uuid
    from core.memory.fading import schedule

    due = schedule(services, within_days=SOON_DAYS)
    found = services.memory.by_uuids([memory_uuid(life.memory_id) for life in due])
    rows = [found[memory_uuid(life.memory_id)] for life in due
            if memory_uuid(life.memory_id) in found]  # fmt: skip
    rows = [e for e in rows if (not tier or e.tier == tier) and (not scope or e.scope == scope)
            and (not topic or topic.lower() in e.topics)]  # fmt: skip
    fades = {life.memory_id: life.fades_at for life in due}
    return MemoryPage(rows, len(rows), fades=fades)


def fading_schedule(services: Services, within_days: float | None = None) -> list[Lifetime]:
    """Entries due to fade soonest (within `within_days` when given), with why and when."""
    from core.memory.fading import schedule

    return schedule(services, within_days=within_days)


def restore_memory(services: Services, memory_id: str) -> MemoryEntry:
    """Bring a faded entry back to recall, with a fresh lifetime."""
    from core.memory.fading import restore

    return restore(services, memory_id)


def memory_lifetime(entry: MemoryEntry) -> Lifetime | None:
    """When an entry fades (counting no recall), or None when it never fades."""
    from core.memory.fading import lifetime

    return lifetime(entry)


@dataclass(frozen=True)
class EntryDetails:
    """An entry's links and the entries at their other ends (its history), its fading
    schedule (None when it never fades) and its recorded versions."""

    uuid: str
    links: list[EntryLink]
    related: dict[str, MemoryEntry]
    lifetime: Lifetime | None = None
    versions: list[Version] = field(default_factory=list)  # oldest first


def entry_details(services: Services, entry: MemoryEntry) -> EntryDetails:
    """The links, history, fading schedule and versions of an entry."""
    from core.memory.fading import lifetime, recall_counts
    from core.memory.versions import history

    links = services.memory.links_of([entry.uuid])
    related = services.memory.by_uuids(
        [u for link in links for u in (link.from_uuid, link.to_uuid)]
    )
    life = lifetime(entry, *recall_counts(services, [entry.uuid])[entry.uuid])
    versions = history(services, entry.memory_id) if services.memory.get(entry.memory_id) else []
    return EntryDetails(entry.uuid, links, related, life, versions)


def topics_for(
    services: Services, user_id: str | None = None, chat_id: str | None = None
) -> list[dict[str, Any]]:
    """What Elora remembers, by entry (id, tier, topics), that this user in this chat may see:
    global and project entries, their own and the chat's."""
    mine = {"global", f"user:{user_id}", f"chat:{chat_id}"}
    rows = services.memory.topics(scope=None)
    return [r for r in rows if r["scope"] in mine or not r["scope"].startswith(("user:", "chat:"))]


def forget_preview(
    services: Services,
    *,
    phrase: str | None = None,
    memory_id: str | None = None,
    with_sources: bool = False,
) -> ErasePlan:
    """What a forget would erase (every copy, store by store), changing nothing."""
    from core.memory.forget import preview

    return preview(services, phrase=phrase, memory_id=memory_id, with_sources=with_sources)


def forget(services: Services, memory_id: str, with_sources: bool = False) -> ForgetReport:
    """Erase an entry from every store (and the messages it came from, when asked). Acting in a
    long-running surface (core.app.acting, holds=True) without the messages, its undo is held
    in this process's memory: the acting's last_action names it (core.memory.unforget)."""
    from core.memory.unforget import forget as forget_held

    report, _ = forget_held(services, memory_id, with_sources=with_sources)
    return report


def forget_matching(services: Services, phrase: str) -> ForgetReport:
    """Erase every copy of a phrase (case and accents aside) from every store and file."""
    from core.memory.forget import forget_matching as erase_phrase

    return erase_phrase(services, phrase)


def context(
    services: Services,
    question: str,
    *,
    chat_id: str | None = None,
    user_id: str | None = None,
    budget: int | None = None,
) -> EvidencePack:
    """The evidence pack a question gets (the documented JSON contract: `pack.to_json()`)."""
    from core.recall.pack import build_pack

    return build_pack(services, question, chat_id=chat_id, user_id=user_id, budget=budget)


def render_pack_text(pack: dict[str, Any]) -> str:
    """An evidence pack (as JSON) as readable text, layer by layer."""
    from core.recall.render import render_pack_text as render

    return render(pack)


def evidence_prompt(pack: dict[str, Any]) -> str:
    """An evidence pack quoted as data for a prompt (the same block the assistant gets)."""
    from core.prompts import render

    return render("evidence", pack=pack)


def search_memory(
    services: Services, query: str, limit: int = 5, tiers: list[str] | None = None
) -> list[dict[str, Any]]:
    """Active entries ranked by hybrid search, as plain data with their scores and sources."""
    from core.memory.api import search_memory as search

    return search(services, query, limit, tiers=tiers)


def search_archive(services: Services, query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Archive chunks matching a query, as pack items with their sources (lexical alone when
    the vectors cannot be used)."""
    from core.errors import EloraError
    from core.recall.archive_search import search_archive as search
    from core.recall.items import archive_item

    vector = None
    try:
        services.vectorspace.ensure_compatible()
        vector = services.embedder.embed_query(query)
    except EloraError as exc:  # lexical hits still come back
        log.warning("archive search without vectors: %s", exc)
    return [archive_item(services, h) for h in search(services, query, vector, limit)]
