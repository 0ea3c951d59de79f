"""Facts a model extracts from archived conversations, indexed as extra keys of their messages.

A message's words are often not the words of the question that needs it ("I'm off to go
swimming with the kids" for "what activities does Melanie do?"). When a model is configured,
each window of the archive is read once by the LITE tier, a few windows per call, and the short
facts it states ("Melanie goes swimming with her kids") become searchable words of the message
and part of its turn key's text, embedded again. Resumable (a message read once is marked, with
or without facts), held to the daily spending cap by the client, and consent-aware: a message
under "don't remember" is never sent.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from core.errors import EloraError
from core.learning.consent import read_consent
from core.storage.db import db_time, from_db_time

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

WINDOWS_PER_CALL = 6
MAX_FACT_CHARS = 200


class TextModel(Protocol):
    """The slice of the LLM client this needs (core.routing.client.LLMClient)."""

    async def complete_text(self, tier: str, messages: list[dict[str, Any]]) -> str: ...


class _Fact(BaseModel):
    message: str
    fact: str = Field(min_length=3, max_length=MAX_FACT_CHARS)


class _Reply(BaseModel):
    facts: list[_Fact]


async def extract_fact_keys(
    services: Services,
    model: TextModel,
    max_calls: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Read not-yet-read windows with the LITE model and index the facts it finds; return
    counts. Stops at the first failure (spending cap, provider, reply out of schema), leaving
    the rest for the next run."""
    calls = facts = messages = 0
    failure = None
    while max_calls is None or calls < max_calls:
        windows = _pending_windows(services, WINDOWS_PER_CALL)
        if not windows:
            break
        sendable = [[m for m in w if not read_consent(m["text"]).suppress_turn] for w in windows]
        refs = {m["ref"]: m for w in sendable for m in w}
        found: list[tuple[int, str]] = []
        if refs:
            from core.prompts import render

            prompt = render("fact_keys", windows=[w for w in sendable if w])
            try:
                reply = await model.complete_text("LITE", [{"role": "user", "content": prompt}])
                parsed = _Reply.model_validate(json.loads(_json_part(reply)))
            except (ValueError, ValidationError) as exc:
                failure = f"fact extraction reply rejected: {str(exc)[:120]}"
                break
            except EloraError as exc:  # spending cap, provider trouble: resume next time
                failure = f"fact extraction stopped: {exc}"
                break
            calls += 1
            found = [
                (refs[f.message]["rowid"], f.fact.strip())
                for f in parsed.facts
                if f.message in refs
            ]
        read = [m["rowid"] for w in windows for m in w]
        _store(services, read, found)
        facts += len(found)
        messages += len(read)
        if on_progress:
            on_progress(len(read))
    if facts:
        services.archive.index_pending()  # the keys changed: embed those turns again
    return {"calls": calls, "messages": messages, "facts": facts, "failure": failure}


def _pending_windows(services: Services, limit: int) -> list[list[dict[str, Any]]]:
    """Up to `limit` windows (or single messages) whose messages were never read for facts."""
    with services.db.session() as session:
        conn = session.connection()
        chunks = conn.exec_driver_sql(
            "SELECT DISTINCT chunk_rowid FROM turn_keys WHERE facts_at IS NULL "
            "AND chunk_rowid IS NOT NULL ORDER BY chunk_rowid LIMIT ?",
            (limit,),
        ).all()
        windows = []
        for n, (chunk_rowid,) in enumerate(chunks, start=1):
            rows = conn.exec_driver_sql(
                "SELECT c.rowid, c.sender, c.role, c.text, c.sent_at FROM turn_keys k "
                "JOIN captures c ON c.rowid = k.capture_rowid WHERE k.chunk_rowid = ? "
                "ORDER BY c.sent_at, c.rowid",
                (chunk_rowid,),
            ).all()
            windows.append(
                [
                    {
                        "ref": f"w{n}m{i}",
                        "rowid": r[0],
                        "speaker": r[1] or r[2] or "",
                        "text": r[3],
                        "date": from_db_time(r[4]).date().isoformat(),
                    }
                    for i, r in enumerate(rows, start=1)
                ]
            )
    return windows


def _store(services: Services, read: list[int], found: list[tuple[int, str]]) -> None:
    """Mark messages read; add facts to their keys and have their turns embedded again."""
    now = db_time(services.clock.now())
    by_turn: dict[int, list[str]] = {}
    for rowid, fact in found:
        by_turn.setdefault(rowid, []).append(fact)
    with services.db.session(write=True) as session:
        conn = session.connection()
        conn.exec_driver_sql(
            "UPDATE turn_keys SET facts_at = ? WHERE capture_rowid = ?", [(now, r) for r in read]
        )
        for rowid, new in by_turn.items():
            keys, facts = conn.exec_driver_sql(
                "SELECT keys, facts FROM turn_keys WHERE capture_rowid = ?", (rowid,)
            ).one()
            merged = list(dict.fromkeys([*json.loads(facts or "[]"), *new]))
            conn.exec_driver_sql(
                "UPDATE turn_keys SET facts = ?, keys = ?, vector = NULL WHERE capture_rowid = ?",
                (json.dumps(merged, ensure_ascii=False), f"{keys} {' '.join(new)}".strip(), rowid),
            )
            conn.exec_driver_sql(
                "UPDATE chunks SET vector_state = 'pending' WHERE rowid = "
                "(SELECT chunk_rowid FROM turn_keys WHERE capture_rowid = ?)",
                (rowid,),
            )


def _json_part(reply: str) -> str:
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return reply[start : end + 1]
