"""What an MCP client may do with Elora's memory: thin calls into the functions every other
surface uses (the evidence pack, hybrid search, the learning path, forget, review), under the
client's scope, with one trace per call (surface "mcp"). No `mcp` import here."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import app
from core.errors import EloraError, InvalidInput, NotFound
from core.mcp.confirmations import ForgetConfirmations

if TYPE_CHECKING:
    from core.config import Settings
    from core.services import Services

log = logging.getLogger(__name__)

SURFACE = "mcp"
OPEN = app.OPEN
# Said with every result that carries recalled text (the model tools say the same).
DATA_NOTE = app.DATA_NOTE
PROPOSAL_STATUSES = {
    "open": OPEN,
    "pending": ("pending",),
    "recommended": ("recommended",),
    "rejected": ("rejected",),
    "approved": ("approved",),
    "all": None,
}


class NotAllowed(EloraError):
    """The operator has not allowed this for MCP clients (or not for this client's scope)."""


@dataclass(frozen=True)
class McpPolicy:
    """Whose scope an MCP client acts in and what the operator lets it do."""

    user_id: str | None = None  # None: the operator (who sees everything)
    operator: bool = True
    direct_writes: bool = False
    allow_approve: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> McpPolicy:
        """ELORA_MCP_USER_ID, ELORA_MCP_DIRECT_WRITES and ELORA_MCP_ALLOW_APPROVE."""
        user = settings.mcp_user_id or None
        return cls(
            user_id=user,
            operator=settings.is_operator(user),
            direct_writes=settings.mcp_direct_writes,
            allow_approve=settings.mcp_allow_approve,
        )

    @property
    def scope(self) -> str:
        """The trace label of this client's scope."""
        return "operator" if self.operator else f"user:{self.user_id}"

    def sees(self, scope: str) -> bool:
        """Whether an entry of this scope is visible: the operator sees all, a user their own."""
        if self.operator:
            return True
        kind, _, value = scope.partition(":")
        if kind == "user":
            return value == self.user_id
        return kind != "chat"  # a chat's entries belong to its members, unknown here


class MemoryTools:
    """The MCP tools of one Elora home; every public method records one trace."""

    def __init__(
        self,
        services: Services,
        policy: McpPolicy | None = None,
        confirmations: ForgetConfirmations | None = None,
    ):
        self.services = services
        self.policy = policy or McpPolicy.from_settings(services.settings)
        self.confirmations = confirmations or ForgetConfirmations(services.clock)

    # -- recall ----------------------------------------------------------------------------

    def context(
        self, question: str, chat_id: str | None = None, budget: int | None = None
    ) -> dict[str, Any]:
        """The evidence pack for a question: exactly `elora context --json`."""
        with self._traced("context", chat_id) as note:
            if not question.strip():
                raise InvalidInput("the question is empty")
            pack = app.context(
                self.services, question, chat_id=chat_id, budget=budget,
                user_id=None if self.policy.operator else self.policy.user_id,
            )  # fmt: skip
            note["pack"] = {
                "items": pack.item_ids(), "used": pack.used, "budget": pack.budget,
                "degraded": pack.degraded, "cut": len(pack.cut), "missing": pack.missing,
            }  # fmt: skip
            return pack.to_json()

    def search(
        self, query: str, tier: str | None = None, limit: int = 5, include_archive: bool = False
    ) -> dict[str, Any]:
        """Memory entries ranked with their scores; archive chunks too when asked (operator)."""
        with self._traced("search") as note:
            if not query.strip():
                raise InvalidInput("the query is empty")
            if include_archive and not self.policy.operator:
                raise NotAllowed(
                    "archive search is the operator's; use context, which applies this "
                    "client's scope to the archive"
                )
            fetch = limit if self.policy.operator else 3 * limit  # room for the scope filter
            items = app.search_memory(self.services, query, fetch, tiers=[tier] if tier else None)
            items = [i for i in items if self.policy.sees(i["scope"])][:limit]
            result: dict[str, Any] = {"note": DATA_NOTE, "items": items}
            if include_archive:
                result["archive"] = app.search_archive(self.services, query, limit)
            note["items"] = [i["memory_id"] for i in items] + [
                a["id"] for a in result.get("archive", [])
            ]
            return result

    def entry(self, memory_id: str) -> dict[str, Any]:
        """One entry as plain data (the `elora://memory/{memory_id}` resource)."""
        with self._traced("read_entry") as note:
            entry = self._visible_entry(memory_id)
            note["memory_id"] = entry.memory_id
            return app.entry_json(entry)

    # -- learning --------------------------------------------------------------------------

    async def remember(
        self,
        text: str,
        kind: str = "fact",
        tier: str | None = None,
        topics: list[str] | None = None,
        importance: int = 2,
    ) -> dict[str, Any]:
        """File a proposal through the learning path (consent rules, admission scores,
        contradictions); with direct writes allowed, an uncontested one is approved at once."""
        with self._traced("remember") as note:
            proposal = await app.propose(
                self.services, SURFACE, text=text, kind=kind, tier=tier, topics=topics or [],
                importance=importance, authority="model", reason="saved by an MCP client",
                scope="global" if self.policy.operator else f"user:{self.policy.user_id}",
            )  # fmt: skip
            contested = proposal.conflict_relation == "contradict"
            if self.policy.direct_writes and proposal.status in OPEN and not contested:
                app.approve(self.services, proposal.id)
                proposal = app.get_proposal(self.services, proposal.id) or proposal
            note.update(proposal_id=proposal.id, status=proposal.status)
            view = app.proposal_view(self.services, proposal)
            return {**_proposal(view), "note": _remember_note(proposal)}

    def proposals_list(self, status: str = "open", limit: int = 20) -> dict[str, Any]:
        """Proposals waiting for review (or of another status), best first (operator only)."""
        with self._traced("proposals_list") as note:
            self._require_operator("reviewing proposals")
            if status not in PROPOSAL_STATUSES:
                raise InvalidInput(f"status must be one of {', '.join(PROPOSAL_STATUSES)}")
            views = app.review_queue(self.services, PROPOSAL_STATUSES[status], limit=limit)
            note["proposals"] = [v.proposal.id for v in views]
            return {"note": DATA_NOTE, "proposals": [_proposal(v) for v in views]}

    def proposals_approve(self, proposal_id: str, edit: str | None = None) -> dict[str, Any]:
        """Approve a proposal (optionally edited) when the operator allows it for MCP clients."""
        with self._traced("proposals_approve") as note:
            self._require_operator("approving proposals")
            if not self.policy.allow_approve:
                raise NotAllowed(
                    "approving from an MCP client is off: the operator reviews proposals in the "
                    "cockpit, on Telegram or with `elora proposals approve` "
                    "(ELORA_MCP_ALLOW_APPROVE=true allows it here)"
                )
            entry = app.approve(self.services, proposal_id, edit=edit)
            note.update(proposal_id=proposal_id, memory_id=entry.memory_id)
            return {
                "status": "approved", "memory_id": entry.memory_id,
                "entry": app.entry_json(entry),
            }  # fmt: skip

    # -- forgetting ------------------------------------------------------------------------

    def forget(
        self, memory_id: str, confirm_token: str | None = None, with_sources: bool = False
    ) -> dict[str, Any]:
        """Without a token: a preview and a one-time token for this memory. With it: forget for
        real (SQLite, FTS, vectors, mirror; the source messages too when asked)."""
        with self._traced("forget") as note:
            entry = self._visible_entry(memory_id)
            if not confirm_token:
                token, expires_at = self.confirmations.issue(entry.memory_id, with_sources)
                note.update(stage="preview", memory_id=entry.memory_id)
                return {
                    "status": "confirmation_required",
                    "memory_id": entry.memory_id, "tier": entry.tier, "kind": entry.kind,
                    "scope": entry.scope, "text": entry.canonical_text,
                    "with_sources": with_sources,
                    "source_messages": len(app.source_capture_ids(entry.sources)),
                    "confirm_token": token, "expires_at": expires_at.isoformat(),
                    "note": "Forgetting cannot be undone. Show this to the operator; call forget "
                    "again with confirm_token (same memory_id and with_sources) only if they agree.",
                }  # fmt: skip
            self.confirmations.redeem(confirm_token, entry.memory_id, with_sources)
            report = app.forget(self.services, entry.memory_id, with_sources=with_sources)
            # The id is a slug that may carry words of the forgotten text: not in the trace.
            note.update(stage="forgotten", memory_id="[forgotten]")
            return {"status": "forgotten", **report.__dict__}

    # -- helpers ---------------------------------------------------------------------------

    def _visible_entry(self, memory_id: str):
        entry = app.get_memory(self.services, memory_id)
        if entry is None or not self.policy.sees(entry.scope):
            raise NotFound(f"no memory {memory_id!r} in this client's scope")
        return entry

    def _require_operator(self, what: str) -> None:
        if not self.policy.operator:
            raise NotAllowed(
                f"{what} is the operator's; this client acts as user {self.policy.user_id}"
            )

    @contextmanager
    def _traced(self, name: str, chat_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Record one trace for the call (what it returned by id, how long, how it failed)."""
        note: dict[str, Any] = {}
        started = time.perf_counter()
        error = None
        try:
            with app.acting(SURFACE, actor=self.policy.user_id):  # versions name the surface
                yield note
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            self._trace(name, note, chat_id, started, error)

    def _trace(self, name, note, chat_id, started, error) -> None:
        pack = note.pop("pack", {})
        try:
            app.record_trace(
                self.services, surface=SURFACE, chat_id=chat_id,
                classification={"intent": f"mcp:{name}", "scope": self.policy.scope},
                pack=pack, tool_calls=[{"name": name, "ok": error is None, "error": error, **note}],
                latency_ms=int((time.perf_counter() - started) * 1000), error=error,
            )  # fmt: skip
        except EloraError as exc:  # the answer matters more than its trace
            log.warning("trace of mcp %s not stored: %s", name, exc)


def _proposal(view: app.ProposalView) -> dict[str, Any]:
    p, other = view.proposal, view.conflict
    conflict = None
    if other is not None:
        conflict = {"relation": p.conflict_relation, "memory_id": other.memory_id,
                    "text": other.canonical_text}  # fmt: skip
    return {
        "proposal_id": p.id, "status": p.status, "text": p.text, "kind": p.kind,
        "tier": p.tier, "memory_id": p.memory_id, "origin": p.origin, "total": p.total,
        "reasons": p.reasons, "conflict": conflict,
        "created_at": p.created_at.isoformat() if p.created_at else None,
    }  # fmt: skip


def _remember_note(proposal) -> str:
    if proposal.status == "approved":
        return "written to memory"
    if proposal.conflict_relation == "contradict":
        return "saved as a proposal: it contradicts a memory, so the operator decides"
    if proposal.status == "rejected":
        return (
            "admission scored it too low: kept in the rejected archive, restorable by the operator"
        )
    return "saved as a proposal: the operator reviews it before it becomes memory"
