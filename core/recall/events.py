"""When did an event happen? Dating "the move" in "what did I pay before the move?".

The first message that mentions a related word ("we're starting to look for a flat in Lyon")
is not the event. The messages most about the event are read for the dates they name, resolved
at index time ("the move is on May 18", "we moved yesterday" sent on the 19th): the day they
agree on is the event's. Only when none names a date is the best message's own date taken.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from core.errors import EloraError
from core.recall.lexical import fold
from core.recall.turn_search import search_turns

if TYPE_CHECKING:
    from core.services import Services

EVENT_GAP = 0.15  # messages this close to the best one are about the event too
EVENT_MESSAGES = 8  # at most this many are read for dates
PRECISE = ("day", "span")  # a week or a month is too vague to anchor "before/after" on


def date_event(
    services: Services,
    question: str,
    anchor: str,
    *,
    embed: bool,
    chats: list[str] | None,
    visible: Callable,
    min_score: float,
    vector: np.ndarray | None = None,
) -> datetime | None:
    """When the event a question is anchored on happened: a maintained episodic entry about it
    (that the asker may see), else the archive (event_date); `embed` says whether vectors work,
    `vector` is the anchor's (as_written) when the caller embedded it already."""
    phrase = as_written(question, anchor)
    hits, _ = services.memory.search(phrase, limit=3, tiers=["episodic"], query_vector=vector)
    for hit in hits:
        if hit.score >= min_score and visible(hit.entry):
            return hit.entry.valid_from or hit.entry.created_at
    if embed and vector is None:
        try:
            vector = services.embedder.embed_query(phrase)
        except EloraError:
            vector = None
    return event_date(services, phrase, vector, chats, min_score)


def as_written(question: str, phrase: str) -> str:
    """A phrase of the folded question as the question writes it (accents and case help the
    embedding); folding keeps positions for French and English text."""
    start = fold(question).replace("’", "'").find(phrase)
    if start < 0:
        return phrase
    return question[start : start + len(phrase)]


def event_date(
    services: Services,
    phrase: str,
    vector: np.ndarray | None,
    chats: list[str] | None,
    min_score: float,
) -> datetime | None:
    """The day an event happened according to the archive, or None if nothing is about it."""
    turns = search_turns(services, phrase, vector, chats=chats).turns
    if not turns or turns[0].score < min_score:
        return None
    best = turns[0].score
    about = [t for t in turns[:EVENT_MESSAGES] if t.score >= best - EVENT_GAP]
    votes: dict[str, float] = defaultdict(float)
    for turn in about:
        for mention in turn.dates:
            if _granularity(mention) in PRECISE:
                votes[mention["start"]] += turn.score
    if votes:
        day = max(votes, key=lambda d: (votes[d], d))
        return datetime.fromisoformat(day)
    return about[0].sent_at


def _granularity(mention: dict) -> str:
    start = datetime.fromisoformat(mention["start"])
    end = datetime.fromisoformat(mention["end"])
    days = (end - start).days
    return "day" if days == 1 else "span" if days <= 3 else "long"
