"""Choosing archive evidence: turns spread over the windows they come from."""

from datetime import datetime

import numpy as np

from core.embeddings import LocalE5Embedder
from core.recall.selection import REDUNDANCY_COST, REPEAT_COST, choose, spread
from core.recall.turn_search import TurnHit


def turn(rowid: int, window: str, score: float, vector: list[float] | None = None) -> TurnHit:
    key = None if vector is None else np.asarray(vector, np.float32) / np.linalg.norm(vector)
    return TurnHit(
        rowid=rowid, capture_id=f"c{rowid}", chunk_id=window, surface="telegram", chat_id="1",
        message_id=str(rowid), speaker="Maria", text=f"turn {rowid}",
        sent_at=datetime(2024, 1, 1), score=score, vector=key,
    )  # fmt: skip


# The shipped embedder's calibration of two statements' closeness (no model is loaded for it).
CALIBRATE = LocalE5Embedder().calibrate


def test_a_window_already_shown_gives_way_to_another_window_scoring_alike():
    hits = [turn(1, "a", 0.60), turn(2, "a", 0.59), turn(3, "a", 0.58), turn(4, "b", 0.57)]

    order = [h.rowid for h in spread(hits)]

    # The third turn of window a now pays for the two before it: b's best comes first.
    assert order == [1, 4, 2, 3]


def test_a_window_that_holds_the_evidence_by_far_keeps_its_places():
    hits = [turn(1, "a", 0.80), turn(2, "a", 0.75), turn(3, "b", 0.75 - 2 * REPEAT_COST)]

    assert [h.rowid for h in spread(hits)] == [1, 2, 3]


def test_choose_keeps_the_same_turns_only_reordered():
    hits = [turn(1, "a", 0.6), turn(2, "a", 0.59), turn(3, "b", 0.58), turn(4, "c", 0.1)]

    chosen = choose(hits, "L2", floor=0.25)

    assert sorted(h.rowid for h in chosen) == [1, 2, 3]
    assert [h.rowid for h in chosen] == [1, 3, 2]


def test_a_paraphrase_of_a_turn_taken_gives_way_to_a_turn_saying_something_else():
    # Three conversations: the second repeats the first in other words (keys almost the same),
    # the third says something else and scores a little lower.
    hits = [
        turn(1, "a", 0.60, [1.0, 0.0, 0.0]),
        turn(2, "b", 0.59, [0.995, 0.1, 0.0]),
        turn(3, "c", 0.59 - REDUNDANCY_COST / 2, [0.0, 1.0, 0.0]),
    ]

    assert [h.rowid for h in spread(hits, CALIBRATE)] == [1, 3, 2]
    # Without the embedder's calibration (or a vector) nothing is measured: the scores decide.
    assert [h.rowid for h in spread(hits)] == [1, 2, 3]


def test_turns_without_a_vector_pay_nothing_for_what_they_say():
    hits = [
        turn(1, "a", 0.60, [1.0, 0.0, 0.0]),
        turn(2, "b", 0.59),
        turn(3, "c", 0.58, [0.0, 1.0, 0.0]),
    ]

    assert [h.rowid for h in choose(hits, "L2", 0.25, CALIBRATE)] == [1, 2, 3]
