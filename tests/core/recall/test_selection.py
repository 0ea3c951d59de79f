"""Choosing archive evidence: turns spread over the windows they come from."""

from datetime import datetime

from core.recall.selection import REPEAT_COST, choose, spread
from core.recall.turn_search import TurnHit


def turn(rowid: int, window: str, score: float) -> TurnHit:
    return TurnHit(
        rowid=rowid, capture_id=f"c{rowid}", chunk_id=window, surface="telegram", chat_id="1",
        message_id=str(rowid), speaker="Maria", text=f"turn {rowid}",
        sent_at=datetime(2024, 1, 1), score=score,
    )  # fmt: skip


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
