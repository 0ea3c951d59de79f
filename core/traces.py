"""Traces: what happened for each request, and the spend they add up to."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, String, type_coerce
from sqlmodel import col, func, select, update

from core.ids import new_id
from core.logs import Redactor
from core.storage.models import Trace

if TYPE_CHECKING:
    from core.archive.spool import Spool
    from core.clock import Clock
    from core.storage.db import Database


class TraceStore:
    """Writes and reads traces; knows today's spend."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        secrets: list[str],
        spool: Spool,
        spooled: Callable[[], None],
    ):
        self.db = db
        self.clock = clock
        self.secrets = secrets  # never stored: redacted from every text field first
        self.spool_files = spool
        self.spooled = spooled  # tells the replayer that something waits in the spool

    def record(self, **fields: Any) -> Trace:
        """Store a trace (secrets are redacted from every text field first)."""
        return self.store(self.build(**fields))

    def build(self, **fields: Any) -> Trace:
        """A trace ready to store (id assigned, secrets redacted), not yet written."""
        redact = Redactor(self.secrets).value
        pieces = _secret_pieces(self.secrets)
        fields = {k: _scrub(redact(v), pieces) for k, v in fields.items()}
        return Trace(id=fields.pop("id", None) or new_id(), created_at=self.clock.now(), **fields)

    def store(self, trace: Trace) -> Trace:
        """Write a built trace; StorageUnavailable when the database refuses writes."""

        def write(session) -> Trace:
            session.add(trace)
            session.flush()  # the rowid is set; every other column is the object's own value
            session.expunge(trace)
            return trace

        return self.db.write(write)

    def spool(self, trace: Trace, reason: str) -> None:
        """Keep a trace in the spool until the database takes writes again (replayed once)."""
        data = trace.model_dump(mode="json", exclude={"rowid"})
        self.spool_files.append_trace(data, reason)
        self.spooled()

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

    def add_feedback(self, trace: Trace, signal: str) -> bool:
        """Attach a feedback signal to a trace once; False when it already carries it."""
        with self.db.session(write=True) as session:
            row = session.get(Trace, trace.rowid)
            if any(event.get("signal") == signal for event in row.feedback):
                return False
            event = {"signal": signal, "at": self.clock.now().isoformat()}
            row.feedback = [*row.feedback, event]
            session.add(row)
        return True

    def disliked_turns(self, start: datetime, end: datetime) -> list[str]:
        """Capture ids of the turns whose reply got a 👎, among every trace of the period."""
        stmt = select(Trace.capture_id, Trace.feedback).where(
            col(Trace.created_at) >= start,
            col(Trace.created_at) < end,
            col(Trace.capture_id).is_not(None),
        )
        with self.db.session() as session:
            rows = session.exec(stmt).all()
        return [
            capture_id
            for capture_id, feedback in rows
            if any(f.get("signal") == "down" for f in feedback or [])
        ]

    def outcomes_since(self, since: datetime) -> list[tuple]:
        """(id, classification, models, tool_calls, escalations, error) of every trace since a
        moment, oldest first; the JSON columns as stored text."""
        stmt = (
            select(
                Trace.id,
                type_coerce(Trace.classification, String),
                type_coerce(Trace.models, String),
                type_coerce(Trace.tool_calls, String),
                type_coerce(Trace.escalations, String),
                Trace.error,
            )
            .where(col(Trace.created_at) >= since)
            .order_by(col(Trace.created_at))
        )
        with self.db.session() as session:
            return list(session.exec(stmt).all())

    def pack_items_after(self, after: int) -> tuple[list[tuple[datetime, str]], int]:
        """(created_at, item id) of every evidence-pack item of the traces stored after rowid
        `after`, and the last rowid read (traces stored meanwhile wait for the next call)."""
        with self.db.session() as session:
            last = session.exec(select(func.coalesce(func.max(Trace.rowid), 0))).one()
            stmt = select(Trace.created_at, Trace.pack).where(
                col(Trace.rowid) > after, col(Trace.rowid) <= last
            )
            rows = session.exec(stmt).all()
        items = [
            (created, item)
            for created, pack in rows
            for item in (pack or {}).get("items") or []
            if isinstance(item, str)
        ]
        return items, max(after, int(last))

    def spent_since(self, since: datetime) -> float:
        """Known cost of every trace since a moment (unknown costs count as zero)."""
        stmt = select(func.coalesce(func.sum(Trace.cost), 0.0)).where(Trace.created_at >= since)
        with self.db.session() as session:
            return float(session.exec(stmt).one())

    def spent_today(self) -> float:
        """Known cost since midnight UTC."""
        now = self.clock.now()
        return self.spent_since(now.replace(hour=0, minute=0, second=0, microsecond=0))

    def daily(self, days: int = 14) -> list[dict[str, Any]]:
        """Requests and spend per day over the last `days` days (for charts)."""
        now = self.clock.now()
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


# -- a forget's row edits, inside its one write transaction (core.memory.erase) -----------

# The JSON columns of a trace, in the order scan_traces returns them.
TRACE_JSON = ("classification", "pack", "models", "escalations", "tool_calls", "learning",
              "feedback")  # fmt: skip


def scan_traces(conn: Connection) -> Iterator[tuple]:
    """(rowid, capture_id, error, *TRACE_JSON) of every trace, JSON as stored text."""
    columns = [type_coerce(getattr(Trace, name), String) for name in TRACE_JSON]
    yield from conn.execute(select(Trace.rowid, Trace.capture_id, Trace.error, *columns))


def rewrite_trace(conn: Connection, rowid: int, values: dict[str, Any]) -> None:
    """New values for some columns of one trace (JSON columns as Python values)."""
    conn.execute(update(Trace).where(col(Trace.rowid) == rowid).values(**values))
