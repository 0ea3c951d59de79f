"""Choosing the archive evidence of a pack: how far down the ranking the scores justify going,
and how chosen turns become items (with the turn a short one answers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.recall.turn_search import TurnHit
from core.storage.db import from_db_time

if TYPE_CHECKING:
    from core.services import Services

# Evidence is kept while it scores within GAP of the best turn: a question with one clear
# answer gets a few turns, a question whose evidence is spread (many turns scoring alike) gets
# many. L3 (deep search) reaches further down. Never below the floor, never past the budget.
GAP = {"L2": 0.35, "L3": 0.4}
MAX_TURNS = {"L2": 40, "L3": 60}
# What a turn pays for each turn of its window already chosen (spread): a tenth of the spread
# of scores between a clear answer and the floor.
REPEAT_COST = 0.03
# What a turn pays for saying what a turn already taken says: this much times its closeness to
# the closest one taken (calibrated as two statements: 0 unrelated, 1 a paraphrase). Five ways
# of saying "my family means a lot to me" leave no room for the camping trip and the museum
# visit a question about "activities with her family" asks for (maximal marginal relevance).
# LoCoMo dev on one index: multi-hop R@10 0.591 -> 0.602 (conv-30 and conv-41 up, conv-26
# level), single-hop 0.858 -> 0.853; each conversation imported alone: multi-hop R@10 up in two
# of three, overall R@10 up. Twice the cost pushes single-hop answers behind paraphrases.
REDUNDANCY_COST = 0.05
SHORT_TURN_CHARS = 80  # a turn this short rarely stands on its own: show the turn it answers
CONTEXT_CHARS = 200


@dataclass
class Evidence:
    """One pack item's worth of turns (consecutive turns merge), ranked by its best turn."""

    turns: list[TurnHit]
    score: float
    context: list[dict] = field(default_factory=list)  # neighbours: the turn answered, the answer
    history: list[TurnHit] = field(default_factory=list)  # earlier values (see updates.py)

    @property
    def first(self) -> TurnHit:
        """The earliest turn of the item."""
        return self.turns[0]


Calibrate = Callable[[float, str], float]  # Embedder.calibrate


def choose(
    hits: list[TurnHit], stage: str, floor: float, calibrate: Calibrate | None = None
) -> list[TurnHit]:
    """The turns worth showing: within the stage's gap of the best one and above the floor,
    spread over the conversations they come from and over what they say (see `spread`)."""
    if not hits:
        return []
    cut = max(floor, hits[0].score - GAP[stage])
    return spread([h for h in hits[: MAX_TURNS[stage]] if h.score >= cut], calibrate)


def spread(hits: list[TurnHit], calibrate: Calibrate | None = None) -> list[TurnHit]:
    """Best first, each turn ranked after paying for the turns already taken from its window
    and for repeating what one of them says.

    Evidence spread over several sessions ("what activities does Melanie do?") must not lose
    its places in the budget to the third and fourth turn of the best session: each turn
    already taken from a window lowers the rest of that window by REPEAT_COST (greedy, as MMR
    does with similarity, the window standing for the session). Given the embedder's
    `calibrate`, a turn whose key is close to a key already taken (a near-paraphrase, from any
    session) also pays REDUNDANCY_COST times that closeness. A turn that holds the evidence by
    far still comes first: the costs only reorder turns that score alike."""
    left, out, taken = list(range(len(hits))), [], {}
    keys = _keys(hits) if calibrate is not None else None
    highest = np.zeros(len(hits), dtype=np.float32)  # cosine to the closest turn taken (>= 0)
    repeats = [0.0] * len(hits)  # what that closeness costs

    def worth(i: int) -> float:
        hit = hits[i]
        return hit.score - REPEAT_COST * taken.get(hit.chunk_id, 0) - repeats[i]

    while left:
        best = max(left, key=worth)
        left.remove(best)
        out.append(hits[best])
        taken[hits[best].chunk_id] = taken.get(hits[best].chunk_id, 0) + 1
        if keys is not None and calibrate is not None and hits[best].vector is not None:
            closeness = keys @ keys[best]  # one row at a time: a small matrix product costs more
            # Calibration only rises with the cosine: only turns closer than before are priced.
            for i in np.flatnonzero(closeness > highest).tolist():
                highest[i] = closeness[i]
                repeats[i] = REDUNDANCY_COST * calibrate(float(closeness[i]), "pair")
    return out


def _keys(hits: list[TurnHit]) -> np.ndarray | None:
    """The turns' key vectors as rows (zeros where a turn has no vector yet: it costs nothing
    and is charged nothing), None when none has one."""
    dim = next((len(h.vector) for h in hits if h.vector is not None), 0)
    if not dim:
        return None
    keys = np.zeros((len(hits), dim), dtype=np.float32)
    for i, hit in enumerate(hits):
        if hit.vector is not None:
            keys[i] = hit.vector
    return keys


def group(chosen: list[TurnHit]) -> list[Evidence]:
    """Chosen turns as items, best first: one turn each, so the pack's order is the ranking.

    Consecutive turns are not merged: the item's dates show where it sits, and a short turn
    gets the turn it answers as a neighbour (attach_context).
    """
    return [Evidence([hit], hit.score) for hit in chosen]


def attach_context(services: Services, items: list[Evidence], shown: set[int]) -> None:
    """Neighbours where a turn cannot stand alone: a short turn gets the turn it answers (even
    when shown elsewhere: it is read with it), a question gets its answer unless that message is
    shown anyway (`shown` rowids)."""
    before = {
        item.first.context_rowid: item
        for item in items
        if item.first.context_rowid and len(item.first.text) <= SHORT_TURN_CHARS
    }
    asking = {item.first.rowid: item for item in items if item.first.asks}
    with services.db.reading() as conn:
        if asking:
            marks = ",".join("?" * len(asking))
            answers = conn.exec_driver_sql(
                "SELECT context_rowid, min(capture_rowid) FROM turn_keys "
                f"WHERE context_rowid IN ({marks}) GROUP BY context_rowid",
                tuple(asking),
            ).all()
            after = {
                answer: asking[question] for question, answer in answers if answer not in shown
            }
        else:
            after = {}
        wanted = set(before) | set(after)
        if not wanted:
            return
        marks = ",".join("?" * len(wanted))
        rows = conn.exec_driver_sql(
            "SELECT rowid, message_id, sender, role, text, sent_at, chat_id FROM captures "
            f"WHERE rowid IN ({marks})",
            tuple(wanted),
        ).all()
    for rowid, message_id, sender, role, text, sent_at, chat_id in rows:
        for owner, position in ((before.get(rowid), "before"), (after.get(rowid), "after")):
            if owner is None or chat_id != owner.first.chat_id:  # a neighbour is of its chat
                continue
            short = text if len(text) <= CONTEXT_CHARS else text[:CONTEXT_CHARS] + "…"
            if position == "before" and len(text) > CONTEXT_CHARS:
                short = "…" + text[-CONTEXT_CHARS:]
            owner.context.append(
                {
                    "message_id": message_id,
                    "speaker": sender or role,
                    "text": short,
                    "date": from_db_time(sent_at).isoformat(),
                    "position": position,
                }
            )
    for item in items:
        item.context.sort(key=lambda n: n["position"] != "before")
