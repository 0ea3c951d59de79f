"""Hybrid search over archive chunks: vectors + BM25, a time window, and neighbouring messages."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import EloraError
from core.recall.lexical import fts_query, normalise_bm25, saturate_bm25
from core.recall.timeparse import TimeWindow
from core.storage import fulltext
from core.storage.db import db_time, from_db_time, run

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

# Hybrid score = VECTOR_WEIGHT x calibrated cosine + LEXICAL_WEIGHT x BM25 strength. BM25 is
# saturated (lexical.saturate_bm25), not divided by the query's best match: that gave any chunk
# sharing only a speaker's name or a common word with the question the full lexical weight, over
# paraphrases that only the vectors found (tests/bench/bench_recall.py, checked on both halves).
VECTOR_WEIGHT = 0.6
LEXICAL_WEIGHT = 0.4
SHORT_MESSAGE_CHARS = 80
# Windows holding at most EXACT_MAX chunks, and under 1/EXACT_RATIO of the archive, are searched
# exactly without Chroma's filter; windows holding most of the archive are searched unfiltered,
# PROBE_FACTOR x deeper. The ratio was measured with bench_pack (100k messages, 22k chunks).
EXACT_MAX = 500
EXACT_RATIO = 50
PROBE_FACTOR = 4
AMONG_MAX = 5000


@dataclass
class ArchiveHit:
    """An archive chunk found for a query, with where it came from."""

    chunk_id: str
    kind: str
    surface: str
    chat_id: str
    text: str
    message_ids: list[str]
    speakers: list[str]
    first_at: datetime
    last_at: datetime
    score: float
    similarity: float | None = None
    lexical: float = 0.0
    neighbours: list[dict[str, Any]] = field(default_factory=list)
    rowid: int = 0


def _epoch(moment: datetime) -> int:
    from datetime import UTC

    return int(moment.replace(tzinfo=UTC).timestamp())


def _vector_where(window: TimeWindow | None, chats: Sequence[str] | None) -> dict | None:
    clauses: list[dict] = []
    if window is not None and window.start is not None:
        clauses.append({"first_at": {"$gte": _epoch(window.start)}})
    if window is not None and window.end is not None:
        clauses.append({"first_at": {"$lt": _epoch(window.end)}})
    if chats is not None:
        clauses.append({"chat_id": {"$in": list(chats)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def search_archive(
    services: Services,
    query: str,
    query_vector: np.ndarray | None,
    limit: int,
    window: TimeWindow | None = None,
    chats: Sequence[str] | None = None,
    mode: str = "hybrid",
) -> list[ArchiveHit]:
    """Top archive chunks for a query; `mode` is hybrid, vector or lexical (for benchmarks).

    `chats` limits the search to those chats (a user's scope); None searches every chat.
    """
    if chats is not None and not chats:
        return []
    fetch = max(3 * limit, 10)
    cosine: dict[str, float] = {}
    if query_vector is not None and mode in ("hybrid", "vector"):
        try:
            cosine = _nearest(services, query_vector, fetch, window, chats)
        except EloraError as exc:
            log.warning("archive vector search failed, lexical only: %s", exc)
            query_vector = None
    bm25 = _lexical(services, query, fetch, window, chats) if mode != "vector" else {}
    hybrid = mode == "hybrid" and query_vector is not None
    strength = saturate_bm25 if hybrid else normalise_bm25
    lexical = dict(zip(bm25, strength(list(bm25.values())), strict=True))
    missing = [c for c in lexical if c not in cosine]
    if query_vector is not None and missing and mode == "hybrid":
        try:
            for cid, vec in services.vectors.get_vectors("archive", missing).items():
                cosine[cid] = float(np.dot(np.asarray(vec, dtype=np.float32), query_vector))
        except EloraError as exc:
            log.warning("could not score lexical archive hits by vector: %s", exc)
    rows = _chunks(services, list(set(cosine) | set(lexical)))
    calibrate = services.embedder.calibrate
    hits = []
    for row in rows:
        sim = cosine.get(row["id"])
        lex = lexical.get(row["id"], 0.0)
        if mode == "vector":
            score = calibrate(sim) if sim is not None else 0.0
        elif not hybrid:
            score = lex
        else:
            score = (
                VECTOR_WEIGHT * (calibrate(sim) if sim is not None else 0.0) + LEXICAL_WEIGHT * lex
            )
        if window is not None and not _in_window(window, row["first_at"], row["last_at"]):
            continue
        hits.append(
            ArchiveHit(
                chunk_id=row["id"],
                kind=row["kind"],
                surface=row["surface"],
                chat_id=row["chat_id"],
                text=row["text"],
                message_ids=row["message_ids"],
                speakers=row["speakers"],
                first_at=row["first_at"],
                last_at=row["last_at"],
                score=round(score, 4),
                similarity=sim,
                lexical=lex,
                rowid=row["rowid"],
            )
        )
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[:limit]


def _nearest(services, query_vector, fetch, window, chats) -> dict[str, float]:
    """The `fetch` chunks nearest to the query within the window (and chat): {id: cosine}.

    Chroma's metadata pre-filter costs CPU in proportion to the whole collection (50-270 ms
    at 24k chunks), however little it keeps. So a window holding few chunks is scored exactly
    here from their stored vectors (reading one costs about as much as filtering EXACT_RATIO
    chunks); a window holding most of the archive ("before the move") is searched unfiltered
    with headroom and the hits filtered here; what lies between is searched among its indexed
    chunks' ids, read here (AMONG_MAX at most: 10-13 ms for 400-5,000 ids), and only a window
    larger still goes through Chroma's filter. A user's scope (`chats`) is a filter of the same
    kind: a guest of most chats is searched unfiltered too. An archive of EXACT_MAX chunks or
    fewer is scored exactly whatever the window: the approximate index can miss the best of a
    few hundred windows when many of them are alike (a chat's repeated small talk).
    """
    bounded = window is not None and (window.start is not None or window.end is not None)
    among = None
    if not bounded and chats is None:
        ids = _window_ids(services, None, None, EXACT_MAX + 1)
        if len(ids) <= EXACT_MAX:
            return _exact(services, query_vector, fetch, ids)
    if bounded or chats is not None:
        # One capped query answers "is the window small?" and yields its ids when it is; the
        # archive is counted only when the ratio or the probe decision needs it.
        ids = _window_ids(services, window, chats, EXACT_MAX + 1)
        if not ids:
            return {}
        inside, total = len(ids), None
        if inside <= EXACT_MAX:
            total = _chunk_count(services)
            if total <= EXACT_MAX or inside <= total / EXACT_RATIO:
                return _exact(services, query_vector, fetch, ids)
        else:
            inside, total = _window_counts(services, window, chats)
        if inside * 2 >= total:
            probe = fetch * PROBE_FACTOR
            hits = services.vectors.query("archive", query_vector.tolist(), probe)
            allowed = set(chats) if chats is not None else None
            kept = [
                h
                for h in hits
                if _starts_inside(window, h.metadata.get("first_at"))
                and (allowed is None or h.metadata.get("chat_id") in allowed)
            ]
            if len(kept) >= fetch or len(hits) < probe:
                return {hit.id: hit.similarity for hit in kept[:fetch]}
        indexed = _window_ids(services, window, chats, AMONG_MAX + 1, indexed=True)
        among = indexed if len(indexed) <= AMONG_MAX else None
    where = _vector_where(window, chats)
    hits = services.vectors.query(
        "archive", query_vector.tolist(), fetch, where, metadata=False, among=among
    )
    return {hit.id: hit.similarity for hit in hits}


def _exact(services, query_vector, fetch, ids: list[str]) -> dict[str, float]:
    """The `fetch` nearest of these chunks by exact cosine over their stored vectors."""
    stored = services.vectors.get_vectors("archive", ids)
    if not stored:
        return {}
    sims = np.asarray(list(stored.values()), dtype=np.float32) @ query_vector.astype(np.float32)
    keys = list(stored)
    return {keys[i]: float(sims[i]) for i in np.argsort(-sims)[:fetch]}


def _starts_inside(window: TimeWindow | None, first_at: int | None) -> bool:
    """The vector filter's test (first_at in [start, end)), on a hit's metadata."""
    if window is None:
        return True
    if first_at is None:
        return False
    if window.start is not None and first_at < _epoch(window.start):
        return False
    return window.end is None or first_at < _epoch(window.end)


def window_bounds(window: TimeWindow | None, after: str, before: str) -> tuple[str, list[Any]]:
    """SQL conditions keeping rows in the window: `after >= start` and `before < end`."""
    sql, params = "", []
    if window is not None and window.start is not None:
        sql += f" AND {after} >= ?"
        params.append(db_time(window.start))
    if window is not None and window.end is not None:
        sql += f" AND {before} < ?"
        params.append(db_time(window.end))
    return sql, params


def _window_sql(window: TimeWindow | None, chats: Sequence[str] | None) -> tuple[str, list]:
    """The chunks the vector filter selects: first_at in [start, end), in the chats if given."""
    bounds, params = window_bounds(window, "first_at", "first_at")
    sql = "FROM chunks WHERE 1 = 1" + bounds
    if chats is not None:
        sql += f" AND chat_id IN ({','.join('?' * len(chats)) or 'NULL'})"
        params.extend(chats)
    return sql, params


def _window_counts(services, window: TimeWindow | None, chats) -> tuple[int, int]:
    """How many chunks the window selects, and how many the archive holds (one query)."""
    sql, params = _window_sql(window, chats)
    with services.db.reading() as conn:
        row = run(
            conn,
            f"SELECT (SELECT count(*) {sql}), (SELECT count(*) FROM chunks)",
            tuple(params),
        ).one()
    return row[0], row[1]


def _chunk_count(services) -> int:
    """How many chunks the archive holds."""
    with services.db.reading() as conn:
        return run(conn, "SELECT count(*) FROM chunks").scalar_one()


def _window_ids(
    services, window: TimeWindow | None, chats, limit: int, indexed: bool = False
) -> list[str]:
    """Ids of (at most `limit` of) the chunks the window selects (`indexed`: those whose
    vectors the index holds, as far as the chunks table knows)."""
    sql, params = _window_sql(window, chats)
    if indexed:
        sql += " AND vector_state = 'indexed'"
    with services.db.reading() as conn:
        rows = run(conn, f"SELECT id {sql} LIMIT ?", (*params, limit)).all()
    return [r[0] for r in rows]


def _in_window(window: TimeWindow, first: datetime, last: datetime) -> bool:
    if window.start is not None and last < window.start:
        return False
    return not (window.end is not None and first >= window.end)


def _lexical(services, query, limit, window, chats) -> dict[str, float]:
    """The best `limit` chunks by BM25 in the window: {id: raw bm25, negative, lower is better}."""
    match = fts_query(query)
    if not match:
        return {}
    where, params = [], {}
    if window is not None and window.start is not None:
        where.append("c.last_at >= :start")
        params["start"] = window.start
    if window is not None and window.end is not None:
        where.append("c.first_at < :end")
        params["end"] = window.end
    if chats is not None:
        marks, named = fulltext.in_list("chat", list(chats))
        where.append(f"c.chat_id IN {marks}")
        params.update(named)
    with services.db.reading() as conn:
        rows = fulltext.matching(
            conn, "chunks", match, select="c.id", alias="c",
            where=" AND ".join(where), params=params, limit=limit,
        )  # fmt: skip
    return {r[0]: r[1] for r in rows}


def _chunks(services, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    with services.db.reading() as conn:
        rows = run(
            conn,
            "SELECT id, kind, surface, chat_id, text, message_ids, speakers, first_at, last_at, "
            f"rowid FROM chunks WHERE id IN ({marks})",
            tuple(ids),
        ).all()
    return [
        {
            "id": r[0],
            "kind": r[1],
            "surface": r[2],
            "chat_id": r[3],
            "text": r[4],
            "message_ids": json.loads(r[5]),
            "speakers": json.loads(r[6]),
            "first_at": from_db_time(r[7]),
            "last_at": from_db_time(r[8]),
            "rowid": r[9],
        }
        for r in rows
    ]


def attach_neighbours(services: Services, hit: ArchiveHit, before: int = 2, after: int = 1) -> None:
    """Bring the messages around a short single-message hit, which rarely stands on its own."""
    if hit.kind != "message" or len(hit.text) > SHORT_MESSAGE_CHARS:
        return
    with services.db.reading() as conn:
        anchor = run(
            conn,
            "SELECT sent_at FROM captures WHERE surface = ? AND chat_id = ? AND message_id = ?",
            (hit.surface, hit.chat_id, hit.message_ids[0]),
        ).first()
        if anchor is None:
            return
        columns = "message_id, sender, role, text, sent_at"
        earlier = run(
            conn,
            f"SELECT {columns} FROM captures WHERE surface = ? AND chat_id = ? AND sent_at < ? "
            "ORDER BY sent_at DESC LIMIT ?",
            (hit.surface, hit.chat_id, anchor[0], before),
        ).all()
        later = run(
            conn,
            f"SELECT {columns} FROM captures WHERE surface = ? AND chat_id = ? AND sent_at > ? "
            "ORDER BY sent_at LIMIT ?",
            (hit.surface, hit.chat_id, anchor[0], after),
        ).all()
    hit.neighbours = [
        {
            "message_id": m[0],
            "speaker": m[1] or m[2],
            "text": m[3],
            "date": str(from_db_time(m[4]).isoformat()),
            "position": "before" if m in earlier else "after",
        }
        for m in [*reversed(earlier), *later]
    ]
