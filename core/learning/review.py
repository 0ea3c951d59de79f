"""The operator's decisions on proposals: approve (optionally edited), reject, restore.

Approval canonicalises the proposal and writes through the memory API, applying the relation
found with the closest entry (confirm, contradict, supersede, deprecate, limit in time).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

from core.errors import InvalidInput, NotFound
from core.learning.admission import APPLY_THRESHOLD
from core.learning.canonical import canonicalise
from core.memory.tombstones import Forgotten, refuse_if_buried
from core.storage.models import MemoryEntry, Proposal

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

OPEN = ("pending", "recommended")


def _require(services: Services, proposal_id: str) -> Proposal:
    proposal = services.proposals.get(proposal_id)
    if proposal is None:
        raise NotFound(f"no proposal {proposal_id!r} (see `elora proposals`)")
    return proposal


def _decide(services: Services, proposal: Proposal, status: str, **fields) -> Proposal:
    with services.db.session(write=True) as session:
        row = session.get(Proposal, proposal.rowid)
        row.status = status
        row.decided_at = services.clock.now()
        for key, value in fields.items():
            setattr(row, key, value)
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
    return row


def approve(services: Services, proposal_id: str, edit: str | None = None) -> MemoryEntry:
    """Approve a pending proposal (edited text optional); return the entry it wrote or touched."""
    proposal = _require(services, proposal_id)
    if proposal.status not in OPEN:
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not open for review")
    if edit is not None and not edit.strip():
        raise InvalidInput("the edited text is empty")
    if edit is None:  # filed before its text was forgotten; an edit is the operator's own words
        refuse_if_buried(services, proposal.text)
    _claim(services, proposal)  # the bot and the cockpit may approve the same one at once
    try:
        entry = _apply(services, proposal, edit)
    except BaseException:
        _release(services, proposal)
        raise
    note = "edited" if edit is not None else proposal.decision_note
    _decide(services, proposal, "approved", memory_id=entry.memory_id, decision_note=note,
            text=edit.strip() if edit is not None else proposal.text)  # fmt: skip
    log.info("proposal %s approved as %s", proposal.id, entry.memory_id)
    return entry


def _claim(services: Services, proposal: Proposal) -> None:
    """Atomically move an open proposal to "approving"; refuse if someone decided first."""
    claimed = services.db.execute(
        "UPDATE proposals SET status = 'approving' WHERE rowid = ? "
        "AND status IN ('pending', 'recommended')",
        (proposal.rowid,),
    )
    if claimed != 1:
        raise InvalidInput(f"proposal {proposal.id[:8]} was decided meanwhile")


def _release(services: Services, proposal: Proposal) -> None:
    services.db.execute(
        "UPDATE proposals SET status = ? WHERE rowid = ? AND status = 'approving'",
        (proposal.status, proposal.rowid),
    )


def _apply(services: Services, proposal: Proposal, edit: str | None) -> MemoryEntry:
    """Write what the proposal means for memory, given its relation to the closest entry."""
    relation = proposal.conflict_relation
    old = _conflict_entry(services, proposal)
    if relation == "duplicate" and old is not None:
        return _confirm(services, old, proposal)
    if relation == "time_limit" and old is not None:
        return _limit(services, old, proposal)
    entry = services.memory.save(canonicalise(services, proposal, edit))
    if old is not None and relation in ("contradict", "supersede", "deprecate"):
        _relate(services, entry, old, relation)
    return entry


def reject(services: Services, proposal_id: str, note: str | None = None) -> Proposal:
    """Move a proposal to the rejected archive (restorable)."""
    proposal = _require(services, proposal_id)
    if proposal.status not in OPEN:
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not open for review")
    return _decide(services, proposal, "rejected", decision_note=note or "rejected")


def restore(services: Services, proposal_id: str) -> Proposal:
    """Bring a rejected proposal back to the queue."""
    proposal = _require(services, proposal_id)
    if proposal.status != "rejected":
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not rejected")
    # Back where admission put it: a contradiction always waits for a decision of its own.
    strong = (proposal.total or 0) >= APPLY_THRESHOLD
    status = "recommended" if strong and proposal.conflict_relation != "contradict" else "pending"
    with services.db.session(write=True) as session:
        row = session.get(Proposal, proposal.rowid)
        row.status, row.decided_at, row.decision_note = status, None, "restored"
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
    return row


def approve_recommended(services: Services) -> list[MemoryEntry]:
    """Approve every recommended proposal (bulk); return the entries written. One filed before
    its text was forgotten stays unapproved (the rest still go through)."""
    entries = []
    for p in services.proposals.list(("recommended",), limit=10_000):
        try:
            entries.append(approve(services, p.id))
        except Forgotten:
            log.info("proposal %s not approved: its text was forgotten", p.id)
    return entries


def _conflict_entry(services: Services, proposal: Proposal) -> MemoryEntry | None:
    if not proposal.conflict_uuid:
        return None
    return services.memory.by_uuids([proposal.conflict_uuid]).get(proposal.conflict_uuid)


def _confirm(services: Services, old: MemoryEntry, proposal: Proposal) -> MemoryEntry:
    """A duplicate confirms: one more observation, a little more confidence, fresher."""
    entry = canonicalise(services, proposal)
    data = old.model_dump(exclude={"rowid", "uuid", "created_at", "vector_state"})
    data["observations"] = old.observations + 1
    data["confidence"] = round(old.confidence + (1 - old.confidence) * 0.25, 4)
    data["last_touched"] = services.clock.now()
    data["sources"] = [*old.sources, *[s for s in entry.sources if s not in old.sources]]
    return services.memory.save(data)


def _limit(services: Services, old: MemoryEntry, proposal: Proposal) -> MemoryEntry:
    """Limit the old entry in time rather than adding a competing one."""
    until = proposal.candidate.get("valid_to")
    until_dt = datetime.fromisoformat(str(until)) if until else services.clock.now()
    attributes = {**old.attributes, "limited_by": proposal.text[:300]}
    return services.memory.set_status(
        old.memory_id, old.status, valid_to=until_dt, attributes=attributes
    )


def _relate(services: Services, new: MemoryEntry, old: MemoryEntry, relation: str) -> None:
    now = services.clock.now()
    if relation == "supersede":
        services.memory.set_status(old.memory_id, "superseded", valid_to=now)
        services.memory.link(new.uuid, old.uuid, "supersedes")
    elif relation == "deprecate":
        services.memory.set_status(old.memory_id, "deprecated", valid_to=now)
        services.memory.link(new.uuid, old.uuid, "deprecates")
    else:
        services.memory.link(new.uuid, old.uuid, "contradicts")
