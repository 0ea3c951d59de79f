"""Canonicalisation: a proposal becomes a strict entry (text, truth mode, dates, sources...)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from core.memory.api import _free_slug
from core.memory.schema import EntryIn, slug_for, topics_from_text
from core.storage.models import MemoryEntry, Proposal

if TYPE_CHECKING:
    from core.services import Services

TRUTH_MODE = {
    "operator": "asserted",
    "heuristic": "observed",
    "model": "observed",
    "job": "inferred",
}


def _as_datetime(value) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def root_entries(services: Services, proposal: Proposal) -> list[MemoryEntry]:
    """The entries a promotion was promoted from (those still kept)."""
    ids = proposal.candidate.get("promoted_from") or []
    return [e for e in (services.memory.get(str(i)) for i in ids) if e is not None]


def canonicalise(services: Services, proposal: Proposal, text: str | None = None) -> EntryIn:
    """The entry a proposal becomes when approved (optionally with the operator's edited text)."""
    c = dict(proposal.candidate)
    body = (text or proposal.text).strip()
    topics = c.get("topics") or topics_from_text(body)
    sources = services.archive.sources(proposal.source_capture_ids)
    for root in root_entries(services, proposal):  # a promotion rests on its roots' messages
        sources += [s for s in root.sources if s not in sources]
    if not sources:
        sources = [{"origin": proposal.origin, "proposal_id": proposal.id}]
    kind = c.get("kind", proposal.kind)
    truth = "hypothesis" if kind == "hypothesis" else TRUTH_MODE.get(proposal.authority, "observed")
    if proposal.origin in ("promotion", "reflexion"):
        truth = "inferred"
    valid_from = _as_datetime(c.get("valid_from"))
    if valid_from is None and kind == "event" and sources and sources[0].get("date"):
        valid_from = _as_datetime(sources[0]["date"])
    memory_id = (
        proposal.memory_id or c.get("memory_id") or _free_slug(services, slug_for(kind, body))
    )
    attributes = {k: v for k, v in (c.get("attributes") or {}).items()}
    for key in ("bucket", "prediction"):  # the environment tier's sub-bucket and prediction
        if c.get(key):
            attributes[key] = c[key]
    attributes.update(
        {"temporality": c.get("temporality", "permanent"), "proposal_id": proposal.id}
    )
    valid_to = _as_datetime(c.get("valid_to"))
    status = "active"
    existing = services.memory.get(memory_id)
    if existing is not None:
        # An edit of a known entry (a mirror edit, a save under its memory_id) revises it: its
        # provenance, dates, status and attributes (e.g. a consent rule's triggers) carry over.
        sources = [*existing.sources, *(s for s in sources if s not in existing.sources)]
        attributes = {**existing.attributes, **attributes}
        valid_from = valid_from or existing.valid_from
        valid_to = valid_to or existing.valid_to
        status = existing.status
    return EntryIn(
        memory_id=memory_id,
        tier=c.get("tier", proposal.tier),
        kind=kind,
        canonical_text=body,
        embedding_text=f"{body} ({', '.join(topics)})",
        truth_mode=truth,
        scope=c.get("scope", "global"),
        importance=int(c.get("importance", 2)),
        confidence=float(c.get("confidence", 0.6)),
        observations=int(c.get("observations", 1)),
        topics=topics,
        last_touched=services.clock.now(),
        valid_from=valid_from,
        valid_to=valid_to,
        status=status,
        sources=sources,
        attributes=attributes,
    )
