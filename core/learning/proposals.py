"""Proposals: what Elora would like to remember, waiting for the operator."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, String, type_coerce
from sqlmodel import col, delete, func, select, update

from core.ids import new_id
from core.storage.models import Proposal

if TYPE_CHECKING:
    from core.clock import Clock
    from core.memory.tombstones import Tombstones
    from core.storage.db import Database


OPEN = ("pending", "recommended")
# How long a claim (a decision being written) holds: a decision takes well under a second, so
# an older claim belongs to a process that died between the claim and the decision.
CLAIM_LEASE = timedelta(minutes=2)


def being_decided(proposal: Proposal, now: datetime) -> bool:
    """Whether a surface is writing a decision on this open proposal right now (a claim past
    its lease no longer counts: the proposal is plainly open again)."""
    return proposal.claimed_at is not None and proposal.claimed_at >= now - CLAIM_LEASE


class ProposalStore:
    """Create, list and fetch proposals (the review flow lives in core.learning.review)."""

    def __init__(self, db: Database, clock: Clock, tombstones: Tombstones):
        self.db = db
        self.clock = clock
        self.tombstones = tombstones

    def create(
        self,
        *,
        text: str,
        kind: str,
        tier: str,
        candidate: dict[str, Any],
        authority: str = "model",
        origin: str = "extraction",
        memory_id: str | None = None,
        source_capture_ids: list[str] | None = None,
        status: str = "pending",
        scores: dict[str, Any] | None = None,
        total: float | None = None,
        reasons: list[str] | None = None,
        conflict_uuid: str | None = None,
        conflict_relation: str | None = None,
    ) -> Proposal:
        """Store a new proposal and return it; a forgotten text is refused (Forgotten)."""
        # The one place proposals are born: extraction, `elora learn`, jobs, model tools and
        # mirror imports all pass here, so none of them brings a forgotten text back.
        self.tombstones.refuse_if_buried(text)
        proposal = Proposal(
            id=new_id(),
            status=status,
            authority=authority,
            origin=origin,
            memory_id=memory_id,
            tier=tier,
            kind=kind,
            text=text,
            candidate=candidate,
            scores=scores or {},
            total=total,
            reasons=reasons or [],
            source_capture_ids=source_capture_ids or [],
            conflict_uuid=conflict_uuid,
            conflict_relation=conflict_relation,
            created_at=self.clock.now(),
        )
        with self.db.session() as session:
            session.add(proposal)
            session.flush()
            session.refresh(proposal)
            session.expunge(proposal)
        return proposal

    def get(self, proposal_id: str) -> Proposal | None:
        """One proposal by id (a unique prefix of at least 6 characters works too)."""
        with self.db.session() as session:
            stmt = select(Proposal).where(Proposal.id == proposal_id)
            row = session.exec(stmt).first()
            if row is None and len(proposal_id) >= 6:
                rows = list(
                    session.exec(select(Proposal).where(col(Proposal.id).startswith(proposal_id)))
                )
                row = rows[0] if len(rows) == 1 else None
            if row is not None:
                session.expunge(row)
            return row

    def list(
        self, statuses: tuple[str, ...] | None = ("pending", "recommended"), limit: int = 100,
        offset: int = 0,
    ) -> list[Proposal]:  # fmt: skip
        """Proposals with these statuses, best total first then newest."""
        stmt = select(Proposal)
        if statuses:
            stmt = stmt.where(col(Proposal.status).in_(statuses))
        stmt = stmt.order_by(
            col(Proposal.total).desc().nulls_last(), col(Proposal.created_at).desc()
        )
        with self.db.session() as session:
            rows = list(session.exec(stmt.offset(offset).limit(limit)))
            for r in rows:
                session.expunge(r)
        return rows

    def count(self, statuses: tuple[str, ...] | None = OPEN) -> int:
        """How many proposals have these statuses (None: every proposal)."""
        stmt = select(func.count()).select_from(Proposal)
        if statuses is not None:
            stmt = stmt.where(col(Proposal.status).in_(statuses))
        with self.db.session() as session:
            return session.exec(stmt).one()

    # -- decisions (core.learning.review decides; this is how it is written) ---------------

    def claim(self, proposal: Proposal, now: datetime) -> datetime | None:
        """Atomically claim an open proposal for a decision; the claim's time, or None when it
        was decided meanwhile or is claimed by a live holder (a claim past CLAIM_LEASE is not)."""
        stmt = (
            update(Proposal)
            .where(
                col(Proposal.rowid) == proposal.rowid,
                col(Proposal.status).in_(OPEN),
                col(Proposal.claimed_at).is_(None) | (col(Proposal.claimed_at) < now - CLAIM_LEASE),
            )
            .values(claimed_at=now)
        )
        with self.db.session(write=True) as session:
            claimed = session.exec(stmt).rowcount
        return now if claimed == 1 else None

    def release(self, proposal: Proposal, claim: datetime) -> None:
        """Give a claim up (its decision failed): the proposal is plainly open again."""
        stmt = (
            update(Proposal)
            .where(col(Proposal.rowid) == proposal.rowid, col(Proposal.claimed_at) == claim)
            .values(claimed_at=None)
        )
        with self.db.session(write=True) as session:
            session.exec(stmt)

    def decide(self, proposal: Proposal, status: str, **fields: Any) -> Proposal:
        """Write a decision (approved, rejected) or a reopening, ending any claim."""
        with self.db.session(write=True) as session:
            row = session.get(Proposal, proposal.rowid)
            row.status = status
            row.claimed_at = None
            for key, value in fields.items():
                setattr(row, key, value)
            session.add(row)
            session.flush()
            session.refresh(row)
            session.expunge(row)
        return row

    def add_to_candidate(self, proposal: Proposal, **values: Any) -> None:
        """Merge values into a proposal's candidate (e.g. what a promotion was drawn from)."""
        with self.db.session(write=True) as session:
            row = session.get(Proposal, proposal.rowid)
            row.candidate = {**row.candidate, **values}
            session.add(row)

    # -- questions other parts ask ---------------------------------------------------------

    def status_counts(self, origin: str | None = None, since: datetime | None = None) -> dict:
        """How many proposals have each status (of one origin, created since a moment)."""
        stmt = select(Proposal.status, func.count()).group_by(Proposal.status)
        if origin is not None:
            stmt = stmt.where(Proposal.origin == origin)
        if since is not None:
            stmt = stmt.where(col(Proposal.created_at) >= since)
        with self.db.session() as session:
            return dict(session.exec(stmt).all())

    def oldest_open(self) -> datetime | None:
        """When the oldest open proposal was filed."""
        stmt = select(func.min(Proposal.created_at)).where(col(Proposal.status).in_(OPEN))
        with self.db.session() as session:
            return session.exec(stmt).one()

    def texts_of(self, memory_id: str, proposal_id: str | None = None) -> list[str]:
        """Every wording of the proposals behind an entry (their text and candidate text)."""
        match = Proposal.memory_id == memory_id
        if proposal_id:
            match = match | (Proposal.id == proposal_id)
        with self.db.session() as session:
            rows = session.exec(select(Proposal.text, Proposal.candidate).where(match)).all()
        return [t for text, candidate in rows for t in (text, (candidate or {}).get("text")) if t]

    def withdraw_drawn_from(self, capture_id: str) -> int:
        """Delete the open proposals drawn from this message alone; return how many."""
        # A LIKE narrows the rows; the JSON list itself decides (no JSON functions: portable).
        stmt = select(Proposal.rowid, Proposal.source_capture_ids).where(
            col(Proposal.status).in_(OPEN),
            type_coerce(Proposal.source_capture_ids, String).contains(capture_id),
        )
        with self.db.session(write=True) as session:
            rowids = [r for r, cited in session.exec(stmt) if cited == [capture_id]]
            if rowids:
                session.exec(delete(Proposal).where(col(Proposal.rowid).in_(rowids)))
        return len(rowids)

    def cited_by(self, origin: str) -> set[str]:
        """Capture ids cited by the proposals of one origin (e.g. what reflexion already read)."""
        stmt = select(Proposal.source_capture_ids).where(Proposal.origin == origin)
        with self.db.session() as session:
            return {c for cited in session.exec(stmt) for c in cited or []}

    def open_edits(self, origin: str, memory_id: str | None) -> list[tuple[str, dict]]:
        """Open proposals of an origin targeting a memory_id (None: a new entry), best first,
        with their candidates."""
        target = (
            col(Proposal.memory_id).is_(None)
            if memory_id is None
            else Proposal.memory_id == memory_id
        )
        stmt = (
            select(Proposal.id, Proposal.candidate)
            .where(Proposal.origin == origin, target, col(Proposal.status).in_(OPEN))
            .order_by(col(Proposal.total).desc().nulls_last(), col(Proposal.created_at).desc())
        )
        with self.db.session() as session:
            return [(pid, candidate) for pid, candidate in session.exec(stmt).all()]

    def candidate_values(self, origin: str, field: str) -> set[str]:
        """Every value of one candidate field among the proposals of an origin (any status):
        e.g. the keys a job already filed."""
        # Read in Python: JSON is stored as text on every database (core.storage.models).
        stmt = select(Proposal.candidate).where(Proposal.origin == origin)
        with self.db.session() as session:
            candidates = session.exec(stmt).all()
        values = ((candidate or {}).get(field) for candidate in candidates)
        return {str(value) for value in values if value}

    def open_forget(self, memory_id: str) -> str | None:
        """The id of an open proposal to forget this entry (a mirror file deleted), if any."""
        stmt = select(Proposal.id).where(
            Proposal.memory_id == memory_id,
            Proposal.conflict_relation == "forget",
            col(Proposal.status).in_(OPEN),
        )
        with self.db.session() as session:
            return session.exec(stmt).first()

    def promotion_filed(self, key: str) -> bool:
        """Whether a promotion with this key is open, approved or rejected (a rejected one stays
        rejected: the same evidence is not re-proposed daily)."""
        stmt = select(Proposal.candidate).where(
            Proposal.origin == "promotion",
            col(Proposal.status).in_(("pending", "recommended", "approved", "rejected")),
        )
        with self.db.session() as session:
            candidates = session.exec(stmt).all()
        # The key is read in Python: JSON is stored as text on every database (few promotions).
        return any((candidate or {}).get("promotion_key") == key for candidate in candidates)


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------


def scan_proposals(conn: Connection) -> Iterator[tuple]:
    """(id, memory_id, text, candidate, reasons, decision_note, source_capture_ids) of every
    proposal, the JSON columns as stored text (searched as they are stored)."""
    stmt = select(
        Proposal.id, Proposal.memory_id, Proposal.text, type_coerce(Proposal.candidate, String),
        type_coerce(Proposal.reasons, String), Proposal.decision_note,
        type_coerce(Proposal.source_capture_ids, String),
    )  # fmt: skip
    yield from conn.execute(stmt)


def delete_proposals(conn: Connection, proposal_ids: list[str]) -> None:
    """Delete proposals by id."""
    for start in range(0, len(proposal_ids), 500):
        part = proposal_ids[start : start + 500]
        conn.execute(delete(Proposal).where(col(Proposal.id).in_(part)))


def unlink_conflicts(conn: Connection, uuids: list[str]) -> None:
    """Proposals that conflicted with these (erased) entries no longer point at them."""
    for start in range(0, len(uuids), 500):
        part = uuids[start : start + 500]
        conn.execute(
            update(Proposal)
            .where(col(Proposal.conflict_uuid).in_(part))
            .values(conflict_uuid=None, conflict_relation=None)
        )
