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
from core.learning.canonical import canonicalise, root_entries
from core.learning.proposals import OPEN, being_decided
from core.memory.api import confirm_entry, save_or_confirm
from core.memory.schema import PROMOTED_FROM
from core.memory.tombstones import Forgotten, refuse_if_buried
from core.storage.models import MemoryEntry, Proposal
from core.undo.context import labelled
from core.undo.log import undoable

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)


def _require(services: Services, proposal_id: str) -> Proposal:
    proposal = services.proposals.get(proposal_id)
    if proposal is None:
        raise NotFound(f"no proposal {proposal_id!r} (see `elora proposals`)")
    return proposal


def _decide(services: Services, proposal: Proposal, status: str, **fields) -> Proposal:
    return services.proposals.decide(proposal, status, decided_at=services.clock.now(), **fields)


def approve(services: Services, proposal_id: str, edit: str | None = None) -> MemoryEntry:
    """Approve a pending proposal (edited text optional); return the entry it wrote or touched.

    Undoable (core.undo) for ELORA_UNDO_MINUTES. A proposal to forget (a file deleted from the
    Markdown mirror) forgets its entry: the entry as it was is returned, with status
    "forgotten"."""
    proposal = _require(services, proposal_id)
    if proposal.status not in OPEN:
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not open for review")
    if edit is not None and not edit.strip():
        raise InvalidInput("the edited text is empty")
    if is_forget(proposal):
        return _forget(services, proposal, edit)
    if edit is None:  # filed before its text was forgotten; an edit is the operator's own words
        refuse_if_buried(services, proposal.text)
    claim = _claim(services, proposal)  # the bot and the cockpit may approve it at once
    label = "edit" if edit is not None else "approve"
    with undoable(services, "approve", proposal.id) as change, labelled(label):
        change.proposal_before(proposal.id, _state(proposal, edited=edit is not None))
        try:
            entry = _apply(services, proposal, edit)
        except BaseException:
            _release(services, proposal, claim)
            raise
        note = "edited" if edit is not None else proposal.decision_note
        _decide(services, proposal, "approved", memory_id=entry.memory_id, decision_note=note,
                text=edit.strip() if edit is not None else proposal.text)  # fmt: skip
    log.info("proposal %s approved as %s", proposal.id, entry.memory_id)
    return entry


def is_forget(proposal: Proposal) -> bool:
    """Whether approving this proposal forgets an entry rather than writing one."""
    return proposal.conflict_relation == "forget"


def _forget(services: Services, proposal: Proposal, edit: str | None) -> MemoryEntry:
    """Approve a proposal to forget: the entry goes through the one forget path (the proposal,
    a copy of its text, goes with it)."""
    from core.memory.unforget import forget

    if edit is not None:
        raise InvalidInput("a proposal to forget cannot be edited: approve or reject it")
    entry = services.memory.get(proposal.memory_id or "")
    if entry is None:
        raise InvalidInput(f"{proposal.memory_id} is already forgotten; reject this proposal")
    claim = _claim(services, proposal)
    try:
        forget(services, entry.memory_id)
    except BaseException:
        _release(services, proposal, claim)
        raise
    log.info("proposal %s approved: %s forgotten", proposal.id, entry.uuid)
    entry.status = "forgotten"
    return entry


def _state(proposal: Proposal, edited: bool) -> dict:
    """What an undo puts back: the proposal's decision fields (its text only if an edit
    replaces it)."""
    state = {"status": proposal.status, "decision_note": proposal.decision_note,
             "memory_id": proposal.memory_id}  # fmt: skip
    if edited:
        state["text"] = proposal.text
    return state


def reopen(services: Services, proposal_id: str, state: dict) -> Proposal:
    """Put an approved proposal back in the queue as it was before (an undone approval)."""
    proposal = _require(services, proposal_id)
    fields = {"decision_note": state.get("decision_note"), "memory_id": state.get("memory_id")}
    if "text" in state:
        fields["text"] = state["text"]
    return services.proposals.decide(proposal, state["status"], decided_at=None, **fields)


def _claim(services: Services, proposal: Proposal) -> datetime:
    """Atomically claim an open proposal for a decision; refuse if someone decided first or is
    deciding now. The status stays open meanwhile, so counts and lists never show it decided
    before it is; a claim past CLAIM_LEASE (its holder died) no longer holds."""
    claim = services.proposals.claim(proposal, services.clock.now())
    if claim is None:
        current = services.proposals.get(proposal.id)
        if current is not None and current.status in OPEN:
            raise InvalidInput(f"proposal {proposal.id[:8]} is being decided elsewhere right now")
        raise InvalidInput(f"proposal {proposal.id[:8]} was decided meanwhile")
    return claim


def _release(services: Services, proposal: Proposal, claim: datetime) -> None:
    services.proposals.release(proposal, claim)


def _apply(services: Services, proposal: Proposal, edit: str | None) -> MemoryEntry:
    """Write what the proposal means for memory, given its relation to the closest entry."""
    relation = proposal.conflict_relation
    old = _conflict_entry(services, proposal)
    if relation == "duplicate" and old is not None:
        return _confirm(services, old, proposal)
    if relation == "time_limit" and old is not None:
        return _limit(services, old, proposal)
    kept = save_or_confirm(services, canonicalise(services, proposal, edit))
    entry = kept.entry
    if kept.confirmed:
        return entry  # said again: the kept memory is confirmed, not copied
    for root in root_entries(services, proposal):  # a promotion keeps its roots
        services.memory.link(entry.uuid, root.uuid, PROMOTED_FROM)
    if old is not None and relation in ("contradict", "supersede", "deprecate"):
        _relate(services, entry, old, relation)
    return entry


def reject(services: Services, proposal_id: str, note: str | None = None) -> Proposal:
    """Move a proposal to the rejected archive (restorable)."""
    proposal = _require(services, proposal_id)
    if proposal.status not in OPEN:
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not open for review")
    _claim(services, proposal)  # not while an approval of it is being written
    return _decide(services, proposal, "rejected", decision_note=note or "rejected")


def restore(services: Services, proposal_id: str) -> Proposal:
    """Bring a rejected proposal back to the queue."""
    proposal = _require(services, proposal_id)
    if proposal.status != "rejected":
        raise InvalidInput(f"proposal {proposal.id[:8]} is {proposal.status}, not rejected")
    # Back where admission put it: a contradiction always waits for a decision of its own.
    strong = (proposal.total or 0) >= APPLY_THRESHOLD
    status = "recommended" if strong and proposal.conflict_relation != "contradict" else "pending"
    return services.proposals.decide(proposal, status, decided_at=None, decision_note="restored")


def approve_recommended(services: Services) -> list[MemoryEntry]:
    """Approve every recommended proposal (bulk); return the entries written. One being
    approved elsewhere right now is that surface's to finish; one filed before its text was
    forgotten stays unapproved (the rest still go through)."""
    now = services.clock.now()
    entries = []
    # One action: a single undo takes the whole batch back.
    with undoable(services, "approve", "recommended"):
        for p in services.proposals.list(("recommended",), limit=10_000):
            if being_decided(p, now):
                continue
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
    return confirm_entry(services, old, canonicalise(services, proposal).sources)


def _limit(services: Services, old: MemoryEntry, proposal: Proposal) -> MemoryEntry:
    """Limit the old entry in time rather than adding a competing one."""
    until = proposal.candidate.get("valid_to")
    until_dt = datetime.fromisoformat(str(until)) if until else services.clock.now()
    attributes = {**old.attributes, "limited_by": proposal.text[:300]}
    with labelled("time-limited"):
        return services.memory.set_status(
            old.memory_id, old.status, valid_to=until_dt, attributes=attributes
        )


def _relate(services: Services, new: MemoryEntry, old: MemoryEntry, relation: str) -> None:
    now = services.clock.now()
    if relation == "supersede":
        with labelled("superseded"):
            services.memory.set_status(old.memory_id, "superseded", valid_to=now)
        services.memory.link(new.uuid, old.uuid, "supersedes")
    elif relation == "deprecate":
        with labelled("deprecated"):
            services.memory.set_status(old.memory_id, "deprecated", valid_to=now)
        services.memory.link(new.uuid, old.uuid, "deprecates")
    else:
        services.memory.link(new.uuid, old.uuid, "contradicts")
