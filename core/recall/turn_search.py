"""Ranking single archived messages (turns) for a question, in the windows that hold them.

Candidates come from four places: the best windows (hybrid search over chunks), the messages
nearest to the question by their own vectors (the `turns` collection), the best messages by
BM25 over their text (nominated by the question's rarest words), and, for a question about a
period, the messages that name a date inside it. Each is scored on its own key (the message read
after the one it answers), its words (its text, resolved dates and extracted facts), its window
and who said it, so a message is found when its window is about the question even if its own
words are not, and the other way round.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from core.archive.turns import TURN_CHARS, blob_vector
from core.offload import beside
from core.recall.archive_search import (
    LEXICAL_WEIGHT,
    VECTOR_WEIGHT,
    ArchiveHit,
    search_archive,
    window_bounds,
)
from core.recall.crosslingual import language
from core.recall.later_start import first_rowid_since
from core.recall.lexical import fold, normalise_bm25, saturate_bm25, terms
from core.recall.timeparse import TimeWindow
from core.recall.turn_probe import nearest_turns
from core.recall.vocabulary import Vocabulary
from core.storage import fulltext
from core.storage.db import db_time, from_db_time
from core.storage.fulltext import Match

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

WINDOW_FETCH = 10  # windows whose turns all become candidates
DENSE_FETCH = 40  # single messages nearest to the question (the `turns` collection)
# ... chosen among this many nearest by their closeness weighed by what they say (SAYS_ENOUGH):
# the nearest keys to a question naming someone are that person's fillers ("Sam: noted").
DENSE_PROBE = 160
# ... that many times deeper for a present-state question: its statement is weighed by what it
# says itself, and it may stand far down the keys' order, behind replies whose keys borrow the
# name and turn they answer (bench_updates: the current value in the pack 0.73 -> 0.79; 2x
# gave the same there but lost a move asked in French in tests/core/recall/test_updates_found).
PRESENT_PROBE = 4
LEXICAL_FETCH = 40  # single messages found by their words
RAREST = 5  # the question's rarest words nominate them
DATED_FETCH = 200  # messages naming a date inside the question's period
# A turn's score: its own key and words, plus a share of its window's score (a turn inside a
# window about the question is likelier evidence than the same words elsewhere), over 1 + share.
# Half: a turn's own key is short and its cosine compressed (e5), so the conversation around it
# says as much about what it is about (LoCoMo dev: R@10 up in every category from 0.3).
WINDOW_SHARE = 0.5
# Who said it: a question naming someone asks what they said or did (97 % of LoCoMo dev's
# evidence when one speaker is named), and the other speaker's reactions to it ("Wow, that
# painting is awesome!") share its words and meaning: their turns yield the first places.
SPEAKER_BONUS = 0.16
# A key's meaning counts in proportion to what the turn itself says, up to this many rare words
# (Vocabulary.information; a fact names at least who or what, and its value): a turn in words
# everyone uses ("haha yes exactly", "noted") borrows its key's meaning from its speaker's name
# and the turn it answers, and would otherwise come closest to any question naming its speaker.
SAYS_ENOUGH = 3.0
# A question word's other forms (lexical.word_forms: "badges" for "badge") score this share of
# the word itself: a prefix also matches unrelated words (famil* ~ familiar).
FORMS_SHARE = 0.75
CONTEXT_SAYS = 0.5  # the turn it answers counts for this much of a turn's key
# A turn that only hands the floor over with a question holds less than its answer (whose own
# key already carries the question as context).
ASKS_PENALTY = 0.08


@dataclass
class TurnHit:
    """One archived message found for a question, and how it scored."""

    rowid: int
    capture_id: str
    chunk_id: str | None
    surface: str
    chat_id: str
    message_id: str
    speaker: str | None
    text: str
    sent_at: datetime
    score: float
    similarity: float | None = None
    lexical: float = 0.0
    window: float = 0.0
    asks: bool = False
    context_rowid: int | None = None
    dates: list[dict[str, str]] = field(default_factory=list)
    vector: np.ndarray | None = None


@dataclass
class Found:
    """What the archive holds for a question: turns, and parts of long texts (never turns)."""

    turns: list[TurnHit]
    parts: list[ArchiveHit]


def search_turns(
    services: Services,
    query: str,
    query_vector: np.ndarray | None,
    *,
    window: TimeWindow | None = None,
    chats: Sequence[str] | None = None,
    vocabulary: Vocabulary | None = None,
    alone: bool = False,
    also: np.ndarray | None = None,
) -> Found:
    """Candidate turns for a question, best first (see the module docstring); `alone`: a
    turn's meaning counts by what it says itself, not with the turn it answers (a present
    state is stated, not borrowed from context: "Premier jour chez Gallimard" among replies);
    `also`: the question's vector in the archive's other language (core.recall.crosslingual),
    searched too, a turn as close as the nearer of the two."""
    # The windows are searched while the single messages are (on another thread: Chroma and
    # SQLite release the GIL, and the machine has two cores).
    searching = beside(
        search_archive, services, query, query_vector, WINDOW_FETCH, window=window, chats=chats
    )
    vocabulary = vocabulary or Vocabulary(services)
    turns = _turns(services, query, query_vector, searching, window, chats, vocabulary, alone, also)
    parts = [h for h in searching.result() if h.kind == "part"]
    return Found(turns, parts)


def _turns(
    services, query, query_vector, searching, window, chats, vocabulary, alone=False, also=None
) -> list[TurnHit]:
    probe = DENSE_PROBE * (PRESENT_PROBE if alone else 1)
    # The other language's probe runs beside the question's own.
    probing = (
        beside(nearest_turns, services, also, probe, window, chats) if also is not None else None
    )
    # Nominated by their rarest words (the common ones match much of the archive and barely
    # move BM25), then scored on all of them.
    match = vocabulary.rarest(query, RAREST)
    near = nearest_turns(services, query_vector, probe, window, chats)
    shift = 0.0
    if probing is not None:
        # e5's cosines differ by language (a French question is closer to any French small
        # talk than to an English statement of its answer): the other language's are shifted
        # so that both probes' DENSE_FETCH-th nearest stand level.
        other = probing.result()
        shift = _level(near) - _level(other) if near and other else 0.0
        for capture_id, similarity in other.items():
            near[capture_id] = max(similarity + shift, near.get(capture_id, -1.0))
    with services.db.reading() as conn:
        candidates = _saying(services, conn, near, vocabulary, alone)
        windows = searching.result()
        candidates |= _window_turns(conn, [h.rowid for h in windows if h.kind != "part"])
        if match:
            candidates |= set(_lexical(conn, match.only("text"), window, chats))
        if window is not None and (window.start or window.end):
            candidates |= _dated(conn, window, chats)
        if not candidates:
            return []
        rows = _details(conn, sorted(candidates))
    texts = {r["rowid"]: r["text"] for r in rows}
    words = vocabulary.scores(query, texts)
    # A word's other forms ("badges" for "badge") count, less than the word itself.
    for rowid, raw in vocabulary.scores(query, texts, forms=True).items():
        words[rowid] = min(words.get(rowid, 0.0), FORMS_SHARE * raw)
    keyed = vocabulary.scores(query, {r["rowid"]: r["keys"] for r in rows if r["keys"]})
    # Only the best windows are scored (the others' vectors would have to be read too).
    window_score = {h.chunk_id: h.score for h in windows}
    keys = {r["rowid"]: (r["text"], r["context_rowid"]) for r in rows}
    if alone:
        said = vocabulary.information({r: text for r, (text, _) in keys.items()}, SAYS_ENOUGH)
    else:
        said = _key_information(_key_texts(services, keys), vocabulary)
    return _score(
        services, query, query_vector, rows, words, keyed, window_score, window, said,
        (also, shift, language(query)) if also is not None else None,
    )  # fmt: skip


def _score(
    services, query, qvec, rows, words, keyed, window_score, window, information, also=None
) -> list[TurnHit]:
    hybrid = qvec is not None
    strength = saturate_bm25 if hybrid else normalise_bm25
    lex = dict(zip(words, strength(list(words.values())), strict=True))
    extra = dict(zip(keyed, strength(list(keyed.values())), strict=True))
    named = set(terms(query))
    calibrate = services.embedder.calibrate
    hits = []
    for r in rows:
        if window is not None and not _inside(window, r["sent_at"], r["dates"]):
            continue
        vector = blob_vector(r["vector"]) if r["vector"] is not None else None
        sim = float(vector @ qvec) if hybrid and vector is not None else None
        if sim is not None and also is not None and language(r["text"]) not in (None, also[2]):
            sim = max(sim, float(vector @ also[0]) + also[1])  # a turn in the other language
        said = max(lex.get(r["rowid"], 0.0), extra.get(r["rowid"], 0.0))
        around = window_score.get(r["chunk_id"])
        if not hybrid:
            own = said
        elif sim is None:  # not embedded on its own yet: its window's vector stands in
            own = around or 0.0
        else:
            says = min(1.0, information.get(r["rowid"], SAYS_ENOUGH) / SAYS_ENOUGH)
            own = VECTOR_WEIGHT * calibrate(sim) * says + LEXICAL_WEIGHT * said
        if around is None:  # its window was not among the best searched: neither for nor against
            around = own
        score = (own + WINDOW_SHARE * around) / (1 + WINDOW_SHARE)
        if r["speaker"] and fold(r["speaker"].split()[0]) in named:
            score += SPEAKER_BONUS
        if r["asks"]:
            score -= ASKS_PENALTY
        row = {**r, "vector": vector}
        hits.append(
            _hit(row, score=round(max(0.0, score), 4), similarity=sim, lexical=said, window=around)
        )
    hits.sort(key=lambda h: (h.score, h.sent_at), reverse=True)
    return hits


def _level(near: dict[str, float]) -> float:
    """How close a probe's near turns are: its DENSE_FETCH-th nearest's cosine."""
    return sorted(near.values(), reverse=True)[:DENSE_FETCH][-1]


def _saying(
    services, conn, near: dict[str, float], vocabulary: Vocabulary, alone: bool = False
) -> set[int]:
    """The DENSE_FETCH nearest turns once their closeness is weighed by what they say."""
    if len(near) <= DENSE_FETCH:
        return set(rowids_of(conn, list(near)).values())
    marks = ",".join("?" * len(near))
    columns, source = "c.id, c.rowid, c.text", "captures c"
    if not alone:  # a turn alone is weighed by its own words: the turn it answers is not read
        columns += ", k.context_rowid, x.text"
        source += (
            " LEFT JOIN turn_keys k ON k.capture_rowid = c.rowid"
            " LEFT JOIN captures x ON x.rowid = k.context_rowid"
        )
    rows = conn.exec_driver_sql(
        f"SELECT {columns} FROM {source} WHERE c.id IN ({marks})", tuple(near)
    ).all()
    if alone:
        said = vocabulary.information({r[1]: r[2] for r in rows}, SAYS_ENOUGH)
    else:
        said = _key_information({r[1]: (r[2], r[3], r[4]) for r in rows}, vocabulary)
    calibrate = services.embedder.calibrate

    def weight(row) -> float:
        return calibrate(near[row[0]]) * min(1.0, said.get(row[1], 0.0) / SAYS_ENOUGH)

    return {row[1] for row in sorted(rows, key=weight, reverse=True)[:DENSE_FETCH]}


def _key_texts(services, keys: dict[int, tuple[str, int | None]]):
    """(text, context rowid, context text) by turn rowid: the texts its key was made of."""
    wanted = sorted({ctx for _, ctx in keys.values() if ctx is not None})
    texts: dict[int, str] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        with services.db.reading() as conn:
            texts = dict(
                conn.exec_driver_sql(
                    f"SELECT rowid, text FROM captures WHERE rowid IN ({marks})", tuple(wanted)
                ).all()
            )
    return {rowid: (text, ctx, texts.get(ctx)) for rowid, (text, ctx) in keys.items()}


def _key_information(keys: dict[int, tuple], vocabulary: Vocabulary) -> dict[int, float]:
    """What a turn's key says (Vocabulary.information): the turn's words and those of the turn
    it answers, which its key holds too ("They're a real support" after a question about her
    family says enough; "haha yes exactly" after "grave 😂" does not). The turn answered is
    read only when the turn alone does not say enough."""
    said = vocabulary.information(
        {rowid: text for rowid, (text, _, _) in keys.items()}, SAYS_ENOUGH
    )
    needy = {
        rowid: ctx
        for rowid, (_, ctx, ctx_text) in keys.items()
        if said[rowid] < SAYS_ENOUGH and ctx is not None and ctx_text
    }
    if needy:
        around = vocabulary.information({keys[r][1]: keys[r][2] for r in needy}, SAYS_ENOUGH)
        for rowid, ctx in needy.items():
            said[rowid] += CONTEXT_SAYS * around.get(ctx, 0.0)
    return said


def rowids_of(conn, capture_ids: list[str]) -> dict[str, int]:
    """Capture rowids by capture id."""
    if not capture_ids:
        return {}
    marks = ",".join("?" * len(capture_ids))
    rows = conn.exec_driver_sql(
        f"SELECT id, rowid FROM captures WHERE id IN ({marks})", tuple(capture_ids)
    ).all()
    return {r[0]: r[1] for r in rows}


def turn_hits(
    services: Services,
    capture_ids: list[str],
    match: str | None,
    *,
    after: datetime | None = None,
    before: datetime | None = None,
    chats: Sequence[str] | None = None,
    limit: int = LEXICAL_FETCH,
) -> list[TurnHit]:
    """These turns, and the `limit` best by BM25 for `match` sent after `after` (or before
    `before`), unscored."""
    with services.db.reading() as conn:
        ids = set(rowids_of(conn, capture_ids).values())
        if match and after is not None and before is None and fulltext.dialect(conn) == "sqlite":
            ids |= set(later_by_words(conn, match.only("text"), after, chats, limit))
        elif match:
            window = TimeWindow("between", after, before) if after or before else None
            ids |= set(_lexical(conn, match.only("text"), window, chats, limit))
        rows = _details(conn, sorted(ids)) if ids else []
    return [_hit(r) for r in rows]


def _hit(row: dict[str, Any], **scores: Any) -> TurnHit:
    """A candidate's details as a TurnHit (unscored unless `scores` says otherwise)."""
    vector = row["vector"]
    return TurnHit(
        rowid=row["rowid"],
        capture_id=row["id"],
        chunk_id=row["chunk_id"],
        surface=row["surface"],
        chat_id=row["chat_id"],
        message_id=row["message_id"],
        speaker=row["speaker"],
        text=row["text"],
        sent_at=row["sent_at"],
        score=scores.pop("score", 0.0),
        asks=bool(row["asks"]),
        context_rowid=row["context_rowid"],
        dates=row["dates"],
        vector=blob_vector(vector) if isinstance(vector, bytes) else vector,
        **scores,
    )


def _inside(window: TimeWindow, sent_at: datetime, dates: list[dict[str, str]]) -> bool:
    """Sent inside the period, or naming a date inside it ("last Friday" said on Monday)."""
    if window.contains(sent_at):
        return True
    for d in dates:
        start, end = datetime.fromisoformat(d["start"]), datetime.fromisoformat(d["end"])
        if (window.end is None or start < window.end) and (
            window.start is None or end > window.start
        ):
            return True
    return False


def _scope_sql(alias: str, chats: Sequence[str] | None) -> tuple[str, list]:
    if chats is None:
        return "", []
    return f" AND {alias}.chat_id IN ({','.join('?' * len(chats)) or 'NULL'})", list(chats)


def _window_turns(conn, chunk_rowids: list[int]) -> set[int]:
    if not chunk_rowids:
        return set()
    marks = ",".join("?" * len(chunk_rowids))
    rows = conn.exec_driver_sql(
        f"SELECT capture_rowid FROM chunk_captures WHERE chunk_rowid IN ({marks})",
        tuple(chunk_rowids),
    ).all()
    return {r[0] for r in rows}


def _lexical(
    conn, match: Match, window: TimeWindow | None, chats, limit: int = LEXICAL_FETCH
) -> dict[int, float]:
    """The best single messages by BM25 over their text and speaker: {rowid: raw bm25}."""
    bounds, params = window_bounds(window, "c.sent_at", "c.sent_at")
    scope, extra = _scope_sql("c", chats)
    rows = fulltext.matching(
        conn, "captures", match, select="c.rowid", alias="c",
        where=f"length(c.text) <= {TURN_CHARS}{bounds}{scope}", params=[*params, *extra],
        limit=limit,
    )  # fmt: skip
    return {r[0]: r[1] for r in rows}


LATER_PROBE = 4  # later_by_words ranks this many times `limit` before reading the messages


def later_by_words(
    conn, match: Match, after: datetime, chats, limit: int = LEXICAL_FETCH
) -> dict[int, float]:
    """`_lexical` for the messages sent after `after` (an update's search, once per anchor):
    the same rows found for less on SQLite. FTS5 is told where later messages start (no earlier
    rowid qualifies: core.recall.later_start) and ranks first, so only the best LATER_PROBE x
    `limit` matches are read from the captures to be filtered; when fewer than `limit` of those
    pass (or a scope would keep few), the plain filtered ranking decides. Ties rank in rowid
    order, as SQLite's sorter keeps them in the order FTS5 yields its rows (so the rows are
    `_lexical`'s, ties included)."""
    since = db_time(after)
    first = first_rowid_since(conn, since)
    if first is None:
        return {}
    scope, extra = _scope_sql("c", chats)
    where = f"length(c.text) <= {TURN_CHARS} AND c.sent_at >= ?{scope}"
    rows: list = []
    if chats is None:  # a scope keeps few of the best matches: it goes to the plain ranking
        rows = conn.exec_driver_sql(
            "SELECT c.rowid, f.rank FROM (SELECT rowid, bm25(captures_fts) AS rank FROM captures_fts "
            "WHERE captures_fts MATCH ? AND rowid >= ? ORDER BY rank, rowid "
            f"LIMIT {LATER_PROBE * int(limit)}) f JOIN captures c ON c.rowid = f.rowid WHERE {where} "
            f"ORDER BY f.rank, c.rowid LIMIT {int(limit)}",
            (str(match), first, since),
        ).all()
    if len(rows) < limit:
        rows = conn.exec_driver_sql(
            "SELECT c.rowid, bm25(captures_fts) AS rank FROM captures_fts "
            "JOIN captures c ON c.rowid = captures_fts.rowid "
            f"WHERE captures_fts MATCH ? AND captures_fts.rowid >= ? AND {where} "
            f"ORDER BY rank, c.rowid LIMIT {int(limit)}",
            (str(match), first, since, *extra),
        ).all()
    return {r[0]: r[1] for r in rows}


def _dated(conn, window: TimeWindow, chats) -> set[int]:
    """Messages naming a date inside the period, wherever they were sent."""
    walk = f" INDEXED BY {_dated_index(conn, window)}" if conn.dialect.name == "sqlite" else ""
    sql = (
        f"SELECT d.capture_rowid FROM turn_dates d{walk} JOIN captures c "
        "ON c.rowid = d.capture_rowid WHERE 1 = 1"
    )
    params: list[Any] = []
    if window.end is not None:
        sql += " AND d.start < ?"
        params.append(db_time(window.end))
    if window.start is not None:
        sql += ' AND d."end" > ?'
        params.append(db_time(window.start))
    scope, extra = _scope_sql("c", chats)
    sql += scope + f" LIMIT {DATED_FETCH}"
    return {r[0] for r in conn.exec_driver_sql(sql, tuple(params + extra)).all()}


def _dated_index(conn, window: TimeWindow) -> str:
    """The index SQLite walks for a period's dated messages: from the side of the dates named
    nearer to the period. By start, it reads every date starting before the period's end; by
    end, every one ending after its start (a recent period: few). PostgreSQL's planner chooses
    from its statistics."""
    if window.start is None or window.end is None:
        return "ix_turn_dates_end" if window.end is None else "ix_turn_dates_start"
    first, last = conn.exec_driver_sql(
        'SELECT (SELECT min(start) FROM turn_dates), (SELECT max("end") FROM turn_dates)'
    ).one()
    if first is None or last is None:
        return "ix_turn_dates_start"
    after = from_db_time(last) - window.start  # the dates ending after the period's start
    before = window.end - from_db_time(first)  # ... and those starting before its end
    return "ix_turn_dates_end" if after < before else "ix_turn_dates_start"


_DETAILS = (
    "rowid", "id", "surface", "chat_id", "message_id", "sender", "role", "text", "sent_at",
    "vector", "asks", "dates", "context_rowid", "chunk_id", "keys",
)  # fmt: skip


def _details(conn, rowids: list[int]) -> list[dict[str, Any]]:
    marks = ",".join("?" * len(rowids))
    rows = conn.exec_driver_sql(
        "SELECT c.rowid, c.id, c.surface, c.chat_id, c.message_id, c.sender, c.role, c.text, "
        "c.sent_at, k.vector, k.asks, k.dates, k.context_rowid, ch.id, k.keys "
        "FROM captures c LEFT JOIN turn_keys k ON k.capture_rowid = c.rowid "
        "LEFT JOIN chunks ch ON ch.rowid = COALESCE(k.chunk_rowid, "
        "(SELECT chunk_rowid FROM chunk_captures WHERE capture_rowid = c.rowid LIMIT 1)) "
        f"WHERE c.rowid IN ({marks}) AND length(c.text) <= {TURN_CHARS}",
        tuple(rowids),
    ).all()
    out = []
    for r in rows:
        row = dict(zip(_DETAILS, r, strict=True))
        if not (row["text"] or "").strip():
            continue
        row["speaker"] = row.pop("sender") or row.pop("role")
        row["sent_at"] = from_db_time(row["sent_at"])
        row["dates"] = json.loads(row["dates"]) if row["dates"] else []
        out.append(row)
    return out
