"""Reviewing what Elora would like to remember: the queue with what a reviewer needs beside
each proposal, and the decisions (approve, edit, reject, restore, approve every recommended)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.learning.proposals import OPEN

if TYPE_CHECKING:
    from core.services import Services
    from core.storage.models import MemoryEntry, Proposal


@dataclass
class ProposalView:
    """A proposal with what the reviewer needs beside it."""

    proposal: Proposal
    conflict: MemoryEntry | None = None  # the entry it conflicts with
    sources: list[dict[str, Any]] = field(default_factory=list)  # its source messages
    approving: bool = False  # a surface is writing its decision right now


def review_queue(
    services: Services,
    statuses: tuple[str, ...] | None = OPEN,
    limit: int = 100,
    *,
    sources: bool = False,
) -> list[ProposalView]:
    """Proposals with these statuses (None: all), best score first, each with the entry it
    conflicts with, whether it is being decided now and (when asked) its source messages."""
    from core.learning.proposals import being_decided

    rows = services.proposals.list(statuses, limit=limit)
    conflicts = services.memory.by_uuids([p.conflict_uuid for p in rows if p.conflict_uuid])
    found: dict[str, dict[str, Any]] = {}
    if sources:  # one query for every source message of the page, not one per proposal
        wanted = [c for p in rows for c in p.source_capture_ids]
        found = {s["capture_id"]: s for s in services.archive.sources(wanted)}
    now = services.clock.now()
    views = []
    for p in rows:
        conflict = conflicts.get(p.conflict_uuid) if p.conflict_uuid else None
        cited = [found[c] for c in p.source_capture_ids if c in found]
        views.append(ProposalView(p, conflict, cited, being_decided(p, now)))
    return views


def proposal_view(services: Services, proposal: Proposal) -> ProposalView:
    """One proposal with the entry it conflicts with and whether it is being decided now."""
    from core.learning.proposals import being_decided

    conflict = None
    if proposal.conflict_uuid:
        conflict = services.memory.by_uuids([proposal.conflict_uuid]).get(proposal.conflict_uuid)
    return ProposalView(proposal, conflict, [], being_decided(proposal, services.clock.now()))


def count_proposals(services: Services, statuses: tuple[str, ...] | None = OPEN) -> int:
    """How many proposals have these statuses (None: all)."""
    return services.proposals.count(statuses)


def get_proposal(services: Services, proposal_id: str) -> Proposal | None:
    """One proposal by id (or a unique prefix of at least 6 characters)."""
    return services.proposals.get(proposal_id)


async def propose(services: Services, origin: str, **candidate: Any) -> Proposal:
    """File something worth remembering through the learning path (consent rules, forgotten
    texts, admission scores, contradictions); InvalidInput when the candidate is malformed."""
    from pydantic import ValidationError

    from core.errors import InvalidInput
    from core.learning.candidates import Candidate

    try:
        checked = Candidate(**candidate)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise InvalidInput(f"{where}: {first['msg']}") from None
    return await services.learner.submit(checked, origin=origin)


def proposal_json(p: Proposal) -> dict[str, Any]:
    """A proposal as plain data."""
    data = p.model_dump(exclude={"rowid"})
    for key in ("created_at", "decided_at", "claimed_at"):
        if data.get(key) is not None:
            data[key] = data[key].isoformat()
    return data
