"""Proposals: what Elora would like to remember, waiting for the operator."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from core.ids import new_id
from core.memory.tombstones import refuse_if_buried
from core.storage.models import Proposal

if TYPE_CHECKING:
    from core.services import Services


# How long a claim (a decision being written) holds: a decision takes well under a second, so
# an older claim belongs to a process that died between the claim and the decision.
CLAIM_LEASE = timedelta(minutes=2)


def being_decided(proposal: Proposal, now: datetime) -> bool:
    """Whether a surface is writing a decision on this open proposal right now (a claim past
    its lease no longer counts: the proposal is plainly open again)."""
    return proposal.claimed_at is not None and proposal.claimed_at >= now - CLAIM_LEASE


class ProposalStore:
    """Create, list and fetch proposals (the review flow lives in core.learning.review)."""

    def __init__(self, services: Services):
        self.services = services
        self.db = services.db

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
        refuse_if_buried(self.services, text)
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
            created_at=self.services.clock.now(),
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

    def count(self, statuses: tuple[str, ...] = ("pending", "recommended")) -> int:
        """How many proposals have these statuses."""
        from sqlmodel import func

        stmt = select(func.count()).select_from(Proposal).where(col(Proposal.status).in_(statuses))
        with self.db.session() as session:
            return session.exec(stmt).one()
