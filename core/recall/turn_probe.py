"""The turns nearest to a vector, kept to a reader's chats and a period.

Chroma's own metadata filter costs CPU in proportion to the whole collection, so the `turns`
collection is probed unfiltered, deeper than wanted, and the hits are filtered here from the
captures. Reading a hit's chat and date costs about what finding it did (some 9 µs a hit at
100k messages), so the probe is only as deep as the filter needs:

- a period keeps few hits: the probe is PROBE_FACTOR times deeper, and what it keeps is
  enough (the windows and the words find the rest), unless the reader's chats are what left
  it short (a scope holding less than WIDE of the hits);
- a reader's chats keep a share of the hits that changes little from one question to the
  next (a guest of most chats: nearly all of them; of a few: a tenth or so). Each scope's last
  share sets how deep its next probe goes (with HEADROOM); a probe that falls short goes as
  deep as the share it kept needs, up to MAX_PROBE, and only a scope keeping too few hits for
  that is searched otherwise: among its turns' ids when they are few (a period of a few
  chats), else through Chroma's filter.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from core.archive.turns import epoch
from core.errors import EloraError
from core.recall.timeparse import TimeWindow
from core.storage.db import db_time, from_db_time

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

PROBE_FACTOR = 4  # an unfiltered probe this much deeper, filtered here (Chroma's filter is slow)
HEADROOM = 1.25  # a scope's probe: this much deeper than its last share of passing hits needs
# The deepest probe of a scope: at 100k messages, a probe of 5,000 with its hits' chats read
# costs about 50 ms, Chroma's filter 90-110 ms whatever the depth asked.
MAX_PROBE = 5000
AMONG_MAX = 5000  # a scope's turns searched among their ids at most (10-13 ms), else filtered
WIDE = 0.5  # a scope holding this share of a probe's hits is not what left a period's short
SCOPES_KEPT = 256  # scopes whose share is remembered (a process serves a few readers)

# The share of each scope's last probe's hits sent in its chats (whatever their dates).
_passed: dict[frozenset[str], float] = {}


def nearest_turns(
    services: Services,
    vector: np.ndarray | None,
    fetch: int,
    window: TimeWindow | None = None,
    chats: Sequence[str] | None = None,
    after: datetime | None = None,
) -> dict[str, float]:
    """The turns nearest to a vector (at most `fetch`), sent in the window (after `after`), in
    the chats: {capture id: cosine}."""
    if vector is None or (chats is not None and not chats):  # no chat: no turn to find
        return {}
    start = max(
        (m for m in (window.start if window else None, after) if m is not None), default=None
    )
    end = window.end if window is not None else None
    low = epoch(start) if start is not None else None
    high = epoch(end) if end is not None else None
    allowed = frozenset(chats) if chats is not None else None
    dated = low is not None or high is not None

    def passes(meta: dict) -> bool:
        sent = meta.get("sent_at", 0)
        return (
            (low is None or sent >= low)
            and (high is None or sent < high)
            and (allowed is None or meta.get("chat_id") in allowed)
        )

    try:
        if not dated and allowed is None:
            hits = services.vectors.query("turns", vector.tolist(), fetch, metadata=False)
            return {h.id: h.similarity for h in hits}
        meta: dict[str, dict[str, Any]] = {}
        share = _passed.get(allowed) if allowed is not None else None
        probe = (_depth(fetch, share) if share is not None and not dated else 0) or (
            fetch * PROBE_FACTOR
        )
        hits, kept = _probe(services, vector, probe, passes, meta, dated)
        # A scope's probe that fell short goes as deep as the share it kept needs, at most
        # MAX_PROBE (a period's, see below).
        while not dated and len(kept) < fetch and len(hits) == probe:
            deeper = _depth(fetch, len(kept) / len(hits))
            if deeper <= probe:
                break
            probe = deeper
            hits, kept = _probe(services, vector, probe, passes, meta, dated)
        share = _remember(allowed, hits, meta) if allowed is not None and hits else share
        short = len(kept) < fetch and len(hits) == probe
        # A period's probe keeps what it found, unless the scope is what left it short (a
        # reader of a few chats): otherwise a guest of most chats would pay Chroma's filter
        # for every question naming a period, and the operator does not.
        if allowed is not None and short and not (dated and share is not None and share >= WIDE):
            clauses: list[dict] = []
            if low is not None:
                clauses.append({"sent_at": {"$gte": low}})
            if high is not None:
                clauses.append({"sent_at": {"$lt": high}})
            clauses.append({"chat_id": {"$in": sorted(allowed)}})
            where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
            # Few turns in the scope and period: searched among their ids (Chroma's filter
            # stands in for any the index does not hold).
            ids = _scope_ids(services, allowed, start, end, AMONG_MAX + 1)
            among = ids if len(ids) <= AMONG_MAX else None
            kept = services.vectors.query(
                "turns", vector.tolist(), fetch, where, metadata=False, among=among
            )
    except EloraError as exc:
        log.warning("turn vector search failed, windows and words only: %s", exc)
        return {}
    return {h.id: h.similarity for h in kept[:fetch]}


def _scope_ids(services, chats: frozenset[str], start, end, limit: int) -> list[str]:
    """Ids of (at most `limit` of) the turns holding a vector sent in these chats, from
    `start` to before `end` (either None: unbounded)."""
    sql = (
        "SELECT c.id FROM captures c JOIN turn_keys k ON k.capture_rowid = c.rowid "
        f"WHERE k.vector IS NOT NULL AND c.chat_id IN ({','.join('?' * len(chats))})"
    )
    params: list[Any] = sorted(chats)
    for bound, op in ((start, ">="), (end, "<")):
        if bound is not None:
            sql += f" AND c.sent_at {op} ?"
            params.append(db_time(bound))
    with services.db.reading() as conn:
        return [r[0] for r in conn.exec_driver_sql(f"{sql} LIMIT {int(limit)}", tuple(params))]


def _remember(scope: frozenset[str], hits, meta) -> float:
    """The share of a probe's hits sent in the scope's chats, kept for its next probe."""
    share = sum(meta.get(h.id, {}).get("chat_id") in scope for h in hits) / len(hits)
    if len(_passed) >= SCOPES_KEPT:
        _passed.clear()
    _passed[scope] = share
    return share


def _depth(fetch: int, share: float) -> int:
    """How deep to probe for `fetch` hits in a scope that kept `share` of them last time (0:
    too few to find that way)."""
    if share * MAX_PROBE < fetch * HEADROOM:
        return 0
    return min(MAX_PROBE, max(fetch + 1, math.ceil(fetch * HEADROOM / share)))


def _probe(services, vector, probe: int, passes: Callable[[dict], bool], meta, dated: bool):
    """The `probe` nearest turns, and those of them that pass; `meta` keeps what was read."""
    hits = services.vectors.query("turns", vector.tolist(), probe, metadata=False)
    meta.update(turn_meta(services, [h.id for h in hits if h.id not in meta], dated))
    return hits, [h for h in hits if h.id in meta and passes(meta[h.id])]


def turn_meta(
    services: Services, capture_ids: list[str], dated: bool = True
) -> dict[str, dict[str, Any]]:
    """What a turn's vector metadata says (chat, and epoch sent unless not `dated`), read from
    the captures."""
    if not capture_ids:
        return {}
    marks = ",".join("?" * len(capture_ids))
    columns = "id, chat_id, sent_at" if dated else "id, chat_id"
    with services.db.reading() as conn:
        rows = conn.exec_driver_sql(
            f"SELECT {columns} FROM captures WHERE id IN ({marks})", tuple(capture_ids)
        ).all()
    if not dated:
        return {r[0]: {"chat_id": r[1]} for r in rows}
    return {r[0]: {"chat_id": r[1], "sent_at": epoch(from_db_time(r[2]))} for r in rows}
