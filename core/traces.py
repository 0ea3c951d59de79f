"""Traces: what happened for each request, and the spend they add up to."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import col, func, select

from core.ids import new_id
from core.storage.models import Trace

if TYPE_CHECKING:
    from core.services import Services


class TraceStore:
    """Writes and reads traces; knows today's spend."""

    def __init__(self, services: Services):
        self.services = services
        self.db = services.db

    def record(self, **fields: Any) -> Trace:
        """Store a trace (secrets are redacted from every text field first)."""
        return self.store(self.build(**fields))

    def build(self, **fields: Any) -> Trace:
        """A trace ready to store (id assigned, secrets redacted), not yet written."""
        redact = self.services.redact
        pieces = _secret_pieces(self.services.settings.secrets())
        fields = {k: _scrub(redact(v), pieces) for k, v in fields.items()}
        return Trace(
            id=fields.pop("id", None) or new_id(), created_at=self.services.clock.now(), **fields
        )

    def store(self, trace: Trace) -> Trace:
        """Write a built trace; StorageUnavailable when the database refuses writes."""

        def write(session) -> Trace:
            session.add(trace)
            session.flush()
            session.refresh(trace)
            session.expunge(trace)
            return trace

        return self.db.write(write)

    def spool(self, trace: Trace, reason: str) -> None:
        """Keep a trace in the spool until the database takes writes again (replayed once)."""
        data = trace.model_dump(mode="json", exclude={"rowid"})
        self.services.spool.append_trace(data, reason)
        self.services.replayer.spooled()

    def store_spooled(self, items: list[dict[str, Any]]) -> int:
        """Store spooled traces, skipping ids already stored; return how many were new."""
        ids = [item["id"] for item in items]
        with self.db.session(write=True) as session:
            known = set(session.exec(select(Trace.id).where(col(Trace.id).in_(ids))))
            fresh = {}
            for item in items:
                if item["id"] in known or item["id"] in fresh:
                    continue
                data = dict(item)
                data["created_at"] = datetime.fromisoformat(data["created_at"])
                fresh[item["id"]] = Trace(**data)
            session.add_all(fresh.values())
        return len(fresh)

    def get(self, trace_id: str) -> Trace | None:
        """One trace by id."""
        with self.db.session() as session:
            row = session.exec(select(Trace).where(Trace.id == trace_id)).first()
            if row is not None:
                session.expunge(row)
            return row

    def for_capture(self, capture_id: str) -> str | None:
        """The id of the trace of the request that began with this message, if any."""
        with self.db.session() as session:
            return session.exec(
                select(Trace.id).where(Trace.capture_id == capture_id).order_by(Trace.created_at)
            ).first()

    def recent(self, limit: int = 50, chat_id: str | None = None) -> list[Trace]:
        """The latest traces, newest first."""
        stmt = select(Trace).order_by(col(Trace.created_at).desc()).limit(limit)
        if chat_id is not None:
            stmt = stmt.where(Trace.chat_id == str(chat_id))
        with self.db.session() as session:
            rows = list(session.exec(stmt))
            for r in rows:
                session.expunge(r)
        return rows

    def last_for_chat(self, chat_id: str) -> Trace | None:
        """The latest trace of a chat (the reply feedback applies to)."""
        rows = self.recent(1, chat_id=chat_id)
        return rows[0] if rows else None

    def spent_since(self, since: datetime) -> float:
        """Known cost of every trace since a moment (unknown costs count as zero)."""
        stmt = select(func.coalesce(func.sum(Trace.cost), 0.0)).where(Trace.created_at >= since)
        with self.db.session() as session:
            return float(session.exec(stmt).one())

    def spent_today(self) -> float:
        """Known cost since midnight UTC."""
        now = self.services.clock.now()
        return self.spent_since(now.replace(hour=0, minute=0, second=0, microsecond=0))

    def daily(self, days: int = 14) -> list[dict[str, Any]]:
        """Requests and spend per day over the last `days` days (for charts)."""
        now = self.services.clock.now()
        start = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
        day = func.date(Trace.created_at)
        stmt = (
            select(day, func.count(), func.coalesce(func.sum(Trace.cost), 0.0))
            .where(Trace.created_at >= start)
            .group_by(day)
        )
        with self.db.session() as session:
            found = {d: (n, c) for d, n, c in session.exec(stmt)}
        out = []
        for i in range(days):
            key = (start + timedelta(days=i)).date().isoformat()
            n, c = found.get(key, (0, 0.0))
            out.append({"day": key, "requests": n, "cost": round(float(c), 6)})
        return out


def escalation_path(trace: Trace) -> str:
    """The tiers the answer went through, e.g. "LITE→FLASH": the start tier, then each
    escalation's target. Auxiliary calls (classifier, learning) are not steps of the path."""
    start = (trace.pack or {}).get("start_tier")
    escalations = [e for e in trace.escalations or [] if isinstance(e, dict)]
    if not start and escalations:
        start = escalations[0].get("from")
    if not start:  # traces with no routing (council, tools): the tiers their calls used
        tiers = [m.get("tier") for m in trace.models or [] if isinstance(m, dict)]
        return "→".join(dict.fromkeys(t for t in tiers if t)) or "-"
    return "→".join([start, *(str(e["to"]) for e in escalations if e.get("to"))])


def trace_row(trace: Trace) -> dict[str, Any]:
    """A trace as one listing row (the cockpit's Traces screen and `elora traces`)."""
    return {
        "id": trace.id,
        "created_at": trace.created_at.isoformat(),
        "surface": trace.surface,
        "chat_id": trace.chat_id,
        "intent": (trace.classification or {}).get("intent"),
        "models": escalation_path(trace),
        "escalations": len(trace.escalations or []),
        "latency_ms": trace.latency_ms,
        "tokens_in": trace.tokens_in,
        "tokens_out": trace.tokens_out,
        "cost": trace.cost,
        "error": trace.error,
    }


def _secret_pieces(secrets: list[str]) -> re.Pattern | None:
    """The long alphanumeric runs of each secret, any case: text that was tokenised (such as the
    search terms a pack lists as missing) would otherwise carry a key into a trace piece by piece."""
    pieces = {p for s in secrets for p in re.split(r"[^A-Za-z0-9]+", s) if len(p) >= 8}
    if not pieces:
        return None
    ordered = sorted(pieces, key=len, reverse=True)
    return re.compile("|".join(re.escape(p) for p in ordered), re.IGNORECASE)


def _scrub(value: Any, pieces: re.Pattern | None) -> Any:
    """`value` with every secret piece replaced (strings, lists and dicts, deeply)."""
    if pieces is None:
        return value
    if isinstance(value, str):
        return pieces.sub("[redacted]", value)
    if isinstance(value, list):
        return [_scrub(v, pieces) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, pieces) for k, v in value.items()}
    return value
