import threading
import time

import pytest

from core.storage.writer_turn import WriterTurn


def _queue_behind(turn, names: list[str], order: list[str], timeout: float, hold: float = 0):
    """Start one waiter per name, each only once the previous one is in the line."""
    threads = []
    for name in names:
        waiting = len(turn._waiters)
        thread = threading.Thread(target=_take, args=(turn, name, order, timeout, hold))
        thread.start()
        while len(turn._waiters) == waiting:  # wait for the state, not for time
            threading.Event().wait(0.001)
        threads.append(thread)
    return threads


def _take(turn, name: str, order: list[str], timeout: float, hold: float) -> None:
    if turn.acquire(timeout):
        order.append(name)
        threading.Event().wait(hold)  # a transaction that takes a while
        turn.release()
    else:
        order.append(f"{name} gave up")


def test_the_turn_goes_to_waiters_in_arrival_order():
    turn = WriterTurn(fair_after=0)  # every waiter overdue at once: strict arrival order
    assert turn.acquire(1)
    order: list[str] = []
    threads = _queue_behind(turn, ["a", "b", "c", "d"], order, timeout=30)
    turn.release()
    for thread in threads:
        thread.join()
    assert order == ["a", "b", "c", "d"]
    assert not turn.locked()


def test_the_releasing_thread_cannot_take_the_turn_back_before_an_overdue_waiter():
    turn = WriterTurn(fair_after=0.05)
    assert turn.acquire(1)
    order: list[str] = []
    (waiter,) = _queue_behind(turn, ["waiter"], order, timeout=30)
    while not turn._overdue(time.monotonic()):  # wait for the state: the waiter is overdue
        threading.Event().wait(0.005)
    turn.release()
    assert turn.acquire(30)  # queued behind the waiter, not ahead of it
    order.append("releaser")
    turn.release()
    waiter.join()
    assert order == ["waiter", "releaser"]


def test_while_nobody_is_overdue_whoever_asks_first_takes_the_free_turn():
    turn = WriterTurn(fair_after=30)
    assert turn.acquire(1)
    order: list[str] = []
    (waiter,) = _queue_behind(turn, ["waiter"], order, timeout=30, hold=0)
    with turn._changed:  # released and taken again in one step: the waiter is not overdue
        turn._held = False
        assert not turn._overdue(time.monotonic())
    assert turn.acquire(1)  # the fast path: no waiting behind a waiter that is not overdue
    order.append("releaser")
    turn.release()
    waiter.join()
    assert order == ["releaser", "waiter"]


def test_a_waiter_gives_up_only_when_the_turn_stays_with_one_holder():
    turn = WriterTurn()
    assert turn.acquire(1)
    assert turn.acquire(0.05) is False  # the holder never let go
    assert turn._waiters == type(turn._waiters)()  # the waiter left the line
    turn.release()
    assert turn.acquire(0.05)
    turn.release()


def test_a_long_line_that_keeps_moving_does_not_time_out_its_last_waiter():
    # Each holder keeps the turn for 0.4 s and the timeout is 1 s: the last of four waiters
    # waits about 1.6 s in all, but the line moves, so it must not give up.
    turn = WriterTurn()
    assert turn.acquire(1)
    order: list[str] = []
    names = [f"w{n}" for n in range(4)]
    threads = _queue_behind(turn, names, order, timeout=1.0, hold=0.4)
    turn.release()
    for thread in threads:
        thread.join()
    assert sorted(order) == names  # every one served, none gave up


def test_releasing_a_turn_nobody_holds_is_a_bug():
    with pytest.raises(RuntimeError, match="nobody holds"):
        WriterTurn().release()
