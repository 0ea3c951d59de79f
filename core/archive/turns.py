"""Turn keys: what each archived message means on its own, so recall can rank single messages.

A window chunk's vector blurs six turns together; a turn alone ("Yes, since May!") means little.
So each message gets a key of its own when its chunk is embedded: the turn read after the turn
it answers (the message it replies to, else the previous message of the chat), its speaker, and
the dates it names resolved against when it was sent ("yesterday" → 2025-05-17). The window's
vector is the mean of its turns' vectors, so a window costs no embedding of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import Connection

from core.archive.dates import date_key, resolve_dates
from core.storage.db import db_time, from_db_time, run

# A message answers the one before it when it follows within a conversation's gap (the window
# gap, 45 minutes by default); after a longer silence it starts something new and is read alone.
# An explicit reply always has its context.
CONTEXT_CHARS = 240  # of the answered turn, kept next to the turn in its key (its end)
TURN_CHARS = 1500  # longer messages are split into parts and searched as parts
_CAPTION = re.compile(r"\[[^\]]*\]")


def asks(text: str) -> bool:
    """Whether a turn hands the floor over with a question: its answer holds the evidence."""
    return _CAPTION.sub("", text).strip().endswith("?")


def vector_blob(vector: np.ndarray) -> bytes:
    """A unit vector as stored with its turn (float16: ranking needs no more precision)."""
    return np.asarray(vector, dtype=np.float16).tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    """The stored vector back as float32."""
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


def unit_mean(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """The mean of unit vectors, made a unit vector again (what several turns say together)."""
    mean = np.mean(vectors, axis=0)
    return mean / (np.linalg.norm(mean) or 1.0)


def stored_vectors(conn: Connection, capture_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """The turn vectors kept for these captures, by capture id (those embedded already)."""
    ids = list(dict.fromkeys(capture_ids))
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        rows = run(
            conn,
            "SELECT c.id, k.vector FROM captures c JOIN turn_keys k ON k.capture_rowid = c.rowid "
            f"WHERE k.vector IS NOT NULL AND c.id IN ({','.join('?' * len(part))})",
            tuple(part),
        ).all()
        found.update((capture_id, blob_vector(blob)) for capture_id, blob in rows)
    return found


def _label(sender: str | None, role: str | None, text: str) -> str:
    who = (sender or role or "").split()
    return f"{who[0]}: {text}" if who else text


@dataclass
class ChunkPlan:
    """What to embed for one pending chunk: its turns' keys, or its own text (parts)."""

    chunk_id: str
    turn_rowids: list[int] = field(default_factory=list)
    text: str | None = None  # set when the chunk is embedded whole (a part of a long text)


@dataclass
class EmbedPlan:
    """Texts to embed for a batch of chunks, and where each vector goes."""

    chunks: list[ChunkPlan]
    texts: list[str] = field(default_factory=list)
    # ("turn", capture rowid) or ("chunk", chunk id), one per text
    owners: list[tuple[str, int | str]] = field(default_factory=list)
    stored: dict[int, np.ndarray] = field(default_factory=dict)  # turn vectors already known
    meta: dict[int, tuple[str, dict]] = field(default_factory=dict)  # rowid: (capture id, meta)


@dataclass
class Embedded:
    """A batch's vectors: one per chunk (for `archive`), one per new turn (for `turns`)."""

    chunks: dict[str, np.ndarray]
    fresh: dict[int, np.ndarray] = field(default_factory=dict)  # new turn vectors by rowid
    turn_ids: list[str] = field(default_factory=list)
    turn_vectors: list[np.ndarray] = field(default_factory=list)
    turn_meta: list[dict] = field(default_factory=list)


def plan(conn: Connection, chunks: list[tuple[str, int, str, str]], gap: timedelta) -> EmbedPlan:
    """Make sure every message of these chunks has a turn key; list the texts to embed.

    `chunks` holds (chunk id, chunk rowid, kind, text). Parts of long texts are embedded whole;
    windows and single messages through their turns (a turn already embedded is reused).
    """
    out = EmbedPlan(chunks=[])
    for chunk_id, chunk_rowid, kind, text in chunks:
        if kind == "part":
            out.chunks.append(ChunkPlan(chunk_id, text=text))
            out.texts.append(text)
            out.owners.append(("chunk", chunk_id))
            continue
        turns = _ensure_keys(conn, chunk_rowid, gap)
        out.chunks.append(ChunkPlan(chunk_id, turn_rowids=[t[0] for t in turns]))
        for rowid, blob, key_text, meta in turns:
            if blob is not None:
                out.stored[rowid] = blob_vector(blob)
            elif ("turn", rowid) not in out.owners:
                out.texts.append(key_text)
                out.owners.append(("turn", rowid))
                out.meta[rowid] = meta
    return out


def finish(embed: EmbedPlan, vectors: np.ndarray) -> Embedded:
    """Each chunk's vector (the mean of its turns') and the new turn vectors (for the `turns`
    collection, then `save` once the vector store has them)."""
    fresh: dict[int, np.ndarray] = {}
    whole: dict[str, np.ndarray] = {}
    for (kind, owner), vector in zip(embed.owners, vectors, strict=True):
        if kind == "turn":
            fresh[int(owner)] = vector
        else:
            whole[str(owner)] = vector
    known = {**embed.stored, **fresh}
    result = Embedded(chunks={}, fresh=fresh)
    for chunk in embed.chunks:
        if chunk.text is not None:
            result.chunks[chunk.chunk_id] = whole[chunk.chunk_id]
            continue
        parts = [known[r] for r in chunk.turn_rowids if r in known]
        if parts:
            result.chunks[chunk.chunk_id] = unit_mean(parts)
    for rowid, vector in fresh.items():
        capture_id, meta = embed.meta[rowid]
        result.turn_ids.append(capture_id)
        result.turn_vectors.append(vector)
        result.turn_meta.append(meta)
    return result


def save(conn: Connection, embedded: Embedded) -> None:
    """Keep the new turn vectors next to their keys (read back to score candidates)."""
    if embedded.fresh:
        conn.exec_driver_sql(
            "UPDATE turn_keys SET vector = ? WHERE capture_rowid = ?",
            [(vector_blob(v), rowid) for rowid, v in embedded.fresh.items()],
        )


def _ensure_keys(conn: Connection, chunk_rowid: int, gap: timedelta) -> list[tuple]:
    """The chunk's messages as (rowid, stored vector, text to embed, (capture id, metadata)),
    creating missing keys."""
    rows = conn.exec_driver_sql(
        "SELECT c.rowid, c.surface, c.chat_id, c.sender, c.role, c.text, c.sent_at, c.reply_to, "
        "k.capture_rowid, k.vector, k.context_rowid, c.id, k.facts FROM chunk_captures cc "
        "JOIN captures c ON c.rowid = cc.capture_rowid "
        "LEFT JOIN turn_keys k ON k.capture_rowid = c.rowid "
        "WHERE cc.chunk_rowid = ? ORDER BY c.sent_at, c.rowid",
        (chunk_rowid,),
    ).all()
    out = []
    previous = None  # (rowid, sent, sender, role, text): a window's messages follow each other
    for row in rows:
        rowid, surface, chat_id, sender, role, text, sent_at, reply_to, known, blob, ctx, cid = row[
            :12
        ]
        facts = json.loads(row[12]) if row[12] else []
        sent = from_db_time(sent_at)
        if known is None or (blob is None and ctx is None):
            if reply_to is None and previous is not None:
                ctx = previous[0] if sent - previous[1] <= gap else None
            else:
                ctx = _context_of(conn, rowid, surface, chat_id, sent, reply_to, gap)
            if known is None:
                _insert_key(conn, rowid, chunk_rowid, ctx, text, sent)
            else:
                conn.exec_driver_sql(
                    "UPDATE turn_keys SET context_rowid = ?, chunk_rowid = ? "
                    "WHERE capture_rowid = ?",
                    (ctx, chunk_rowid, rowid),
                )
            blob = None
        meta = {
            "chat_id": chat_id,
            "surface": surface,
            "sent_at": epoch(sent),
            "chunk": chunk_rowid,
        }
        if blob is None:
            before = previous[2:] if previous is not None and ctx == previous[0] else None
            key = _key_text(conn, ctx, sender, role, text, before)
            if facts:  # what a model read in it (fact_keys.py)
                key += "\n" + "; ".join(facts)
        else:
            key = ""  # embedded already: not embedded again
        out.append((rowid, blob, key, (cid, meta)))
        previous = (rowid, sent, sender, role, text)
    return out


def epoch(moment: datetime) -> int:
    """A turn's time as its vector's metadata holds it (whole seconds since 1970, naive UTC)."""
    return int((moment - datetime(1970, 1, 1)).total_seconds())


def _context_of(conn, rowid, surface, chat_id, sent: datetime, reply_to, gap) -> int | None:
    """The turn this message answers: the one it replies to, else the chat's previous message."""
    if reply_to is not None:
        row = conn.exec_driver_sql(
            "SELECT rowid FROM captures WHERE surface = ? AND chat_id = ? AND message_id = ?",
            (surface, chat_id, reply_to),
        ).first()
        if row is not None:
            return row[0]
    when = db_time(sent)
    row = conn.exec_driver_sql(
        "SELECT rowid, sent_at FROM captures WHERE chat_id = ? AND surface = ? "
        "AND (sent_at < ? OR (sent_at = ? AND rowid < ?)) ORDER BY sent_at DESC, rowid DESC LIMIT 1",
        (chat_id, surface, when, when, rowid),
    ).first()
    if row is None or sent - from_db_time(row[1]) > gap:
        return None
    return row[0]


def _insert_key(conn, rowid: int, chunk_rowid: int, ctx: int | None, text: str, sent) -> None:
    mentions = resolve_dates(text, sent)
    conn.exec_driver_sql(
        # A new key replaces the old one whole (facts and vector too), on both databases.
        "INSERT INTO turn_keys (capture_rowid, chunk_rowid, context_rowid, dates, keys, asks) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (capture_rowid) DO UPDATE SET "
        "chunk_rowid = excluded.chunk_rowid, context_rowid = excluded.context_rowid, "
        "dates = excluded.dates, keys = excluded.keys, asks = excluded.asks, facts = '[]', "
        "vector = NULL, facts_at = NULL",
        (
            rowid,
            chunk_rowid,
            ctx,
            json.dumps([m.to_json() for m in mentions], ensure_ascii=False),
            date_key(mentions),
            asks(text),
        ),
    )
    if mentions:
        conn.exec_driver_sql(
            'INSERT INTO turn_dates (capture_rowid, start, "end") VALUES (?, ?, ?) '
            "ON CONFLICT DO NOTHING",
            [(rowid, db_time(_midnight(m.start)), db_time(_midnight(m.end))) for m in mentions],
        )


def _midnight(day) -> datetime:
    return datetime(day.year, day.month, day.day)


def _key_text(conn, ctx: int | None, sender, role, text: str, before=None) -> str:
    """The text embedded for a turn: the end of the turn it answers, then the turn.

    `before` is that turn's (sender, role, text) when the caller has it already."""
    turn = _label(sender, role, text[:TURN_CHARS])
    if ctx is None:
        return turn
    if before is None:
        before = conn.exec_driver_sql(
            "SELECT sender, role, text FROM captures WHERE rowid = ?", (ctx,)
        ).first()
    if before is None or not before[2]:
        return turn
    said = before[2]
    said = said if len(said) <= CONTEXT_CHARS else "…" + said[-CONTEXT_CHARS:]
    return f"{_label(before[0], before[1], said)}\n{turn}"


# -- a forget's scan and clean-up, inside its one write transaction (core.memory.erase) ----


def drop_vectors(conn: Connection) -> None:
    """Every turn key to be embedded again (after a model change)."""
    conn.exec_driver_sql("UPDATE turn_keys SET vector = NULL")


def vector_count(conn: Connection) -> int:
    """Turn keys holding a vector (what the `turns` collection should hold)."""
    return conn.exec_driver_sql("SELECT count(*) FROM turn_keys WHERE vector IS NOT NULL").scalar()


def stored_facts(conn: Connection) -> dict[int, str]:
    """{capture rowid: facts as stored} of the messages whose keys hold facts."""
    rows = conn.exec_driver_sql("SELECT capture_rowid, facts FROM turn_keys WHERE facts != '[]'")
    return {rowid: facts for rowid, facts in rows}


def optimize_search(conn: Connection) -> None:
    """Merge the turn keys' full-text segments so deleted terms leave the files (FTS5)."""
    if conn.dialect.name == "sqlite":  # PostgreSQL: a forget rewrites the tables afterwards
        conn.exec_driver_sql("INSERT INTO turn_keys_fts(turn_keys_fts) VALUES ('optimize')")
