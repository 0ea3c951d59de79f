"""Turning recalled entries and archive hits into evidence-pack items (the JSON contract)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.memory.schema import PROMOTED_FROM, TIER_MEANING
from core.recall.archive_search import ArchiveHit
from core.recall.selection import Evidence
from core.recall.tokens import count_tokens
from core.recall.turn_search import TurnHit
from core.storage.db import from_db_time, run
from core.storage.models import EntryLink, MemoryEntry

if TYPE_CHECKING:
    from core.services import Services

ITEM_OVERHEAD_TOKENS = 12


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def item_tokens(item: dict[str, Any]) -> int:
    """What an item costs in the prompt: its text, neighbours and a fixed label overhead."""
    extra = sum(count_tokens(n["text"]) + 4 for n in item.get("neighbours", []))
    return count_tokens(item["text"]) + extra + ITEM_OVERHEAD_TOKENS


def entry_item(
    entry: MemoryEntry,
    score: float,
    links: list[EntryLink],
    related: dict[str, MemoryEntry],
    reason: str = "",
) -> dict[str, Any]:
    """An entry as a pack item, with its contradictions, superseded history and roots."""
    contradictions, history, roots = [], [], []
    for link in links:
        if entry.uuid not in (link.from_uuid, link.to_uuid):
            continue
        other = related.get(link.to_uuid if link.from_uuid == entry.uuid else link.from_uuid)
        if other is None:
            continue
        ref = {"id": other.memory_id, "relation": link.relation, "text": other.canonical_text}
        if link.relation == "contradicts":
            contradictions.append(ref)
        elif link.relation in ("supersedes", "deprecates", "limits-in-time"):
            history.append({**ref, "status": other.status, "valid_to": _iso(other.valid_to)})
        elif link.relation == PROMOTED_FROM and link.from_uuid == entry.uuid:
            roots.append({**ref, "tier": other.tier, "status": other.status,
                          "date": _iso(other.valid_from or other.created_at)})  # fmt: skip
    item = {
        "id": entry.memory_id,
        "source_type": "entry",
        "tier": entry.tier,
        "tier_meaning": TIER_MEANING[entry.tier],
        "kind": entry.kind,
        "text": entry.canonical_text,
        "score": round(score, 4),
        "confidence": entry.confidence,
        "importance": entry.importance,
        "truth_mode": entry.truth_mode,
        "status": entry.status,
        "scope": entry.scope,
        "topics": entry.topics,
        "dates": {
            "created_at": _iso(entry.created_at),
            "last_touched": _iso(entry.last_touched),
            "valid_from": _iso(entry.valid_from),
            "valid_to": _iso(entry.valid_to),
        },
        "sources": [_source(s) for s in entry.sources],
        "contradictions": contradictions,
        "history": history,
        "roots": roots,
        "reason": reason,
    }
    if entry.tier == "environment":  # what to expect, and about what
        attrs = entry.attributes or {}
        item["prediction"] = attrs.get("prediction")
        item["bucket"] = attrs.get("bucket")
    return item


def _source(source: dict[str, Any]) -> dict[str, Any]:
    keys = ("surface", "chat_id", "message_id", "date", "capture_id", "speaker", "origin")
    return {k: source.get(k) for k in keys if source.get(k) is not None}


def archive_item(services: Services, hit: ArchiveHit) -> dict[str, Any]:
    """An archive chunk as a pack item: speakers, dates, the chat and every message id."""
    return {
        "id": f"archive:{hit.chunk_id}",
        "source_type": "archive",
        "tier": "archive",
        "tier_meaning": "evidence",
        "kind": hit.kind,
        "text": hit.text,
        "score": hit.score,
        "confidence": None,
        "chat_id": hit.chat_id,
        "surface": hit.surface,
        "message_ids": hit.message_ids,
        "speakers": hit.speakers,
        "dates": {"first_at": _iso(hit.first_at), "last_at": _iso(hit.last_at)},
        "sources": message_sources(services, hit),
        "neighbours": hit.neighbours,
        "contradictions": [],
    }


def message_sources(services: Services, hit: ArchiveHit) -> list[dict[str, Any]]:
    """One source per message the chunk covers: surface, chat, message id, date, speaker."""
    marks = ",".join("?" * len(hit.message_ids))
    # `+sent_at`: sort the few rows found by the unique (surface, chat_id, message_id) index;
    # a plain ORDER BY sent_at makes SQLite walk the chat's whole (chat_id, sent_at) index.
    # (PostgreSQL has no unary + on timestamps and its planner needs no such hint.)
    order = "+sent_at" if services.db.dialect == "sqlite" else "sent_at"
    with services.db.reading() as conn:
        rows = run(
            conn,
            "SELECT message_id, sent_at, sender, role FROM captures "
            f"WHERE surface = ? AND chat_id = ? AND message_id IN ({marks}) ORDER BY {order}",
            (hit.surface, hit.chat_id, *hit.message_ids),
        ).all()
    return [
        {
            "surface": hit.surface,
            "chat_id": hit.chat_id,
            "message_id": r[0],
            "date": from_db_time(r[1]).isoformat(),
            "speaker": r[2] or r[3],
        }
        for r in rows
    ]


def evidence_item(evidence: Evidence) -> dict[str, Any]:
    """Chosen turns as a pack item: the messages, who said them, when, and the dates they name.

    `history` lists earlier statements of the same fact (oldest last) when the question asks
    about a present state and this item holds the latest one (see core.recall.updates).
    """
    turns = evidence.turns
    first = turns[0]
    item = {
        "id": f"archive:message:{first.capture_id}",
        "source_type": "archive",
        "tier": "archive",
        "tier_meaning": "evidence",
        "kind": "message" if len(turns) == 1 else "window",
        "text": "\n".join(_turn_line(t) for t in turns),
        "score": round(evidence.score, 4),
        "confidence": None,
        "chat_id": first.chat_id,
        "surface": first.surface,
        "message_ids": [t.message_id for t in turns],
        "speakers": list(dict.fromkeys(t.speaker for t in turns if t.speaker)),
        "dates": {"first_at": _iso(first.sent_at), "last_at": _iso(turns[-1].sent_at)},
        "resolved_dates": [
            {"message_id": t.message_id, "phrase": d["phrase"], "date": d["date"]}
            for t in turns
            for d in t.dates
        ],
        "sources": [
            {
                "surface": t.surface,
                "chat_id": t.chat_id,
                "message_id": t.message_id,
                "date": _iso(t.sent_at),
                "speaker": t.speaker,
                "capture_id": t.capture_id,
            }
            for t in turns
        ],
        "neighbours": evidence.context,
        "contradictions": [],
    }
    if evidence.history:
        item["current"] = True
        item["history"] = [
            {
                "id": f"archive:message:{t.capture_id}",
                "chat_id": t.chat_id,
                "message_id": t.message_id,
                "speaker": t.speaker,
                "text": t.text,
                "date": _iso(t.sent_at),
                "status": "superseded" if t.sent_at < evidence.first.sent_at else "mentioned",
                "valid_to": _iso(evidence.first.sent_at)
                if t.sent_at < evidence.first.sent_at
                else None,
            }
            for t in evidence.history
        ]
    return item


def _turn_line(turn: TurnHit) -> str:
    return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
