"""The shared update queue: each update once, each chat in order, leases that run out.

These run on SQLite in the plain suite and on PostgreSQL (row locks, SKIP LOCKED, the
server's clock) when ELORA_TEST_DATABASE_URL is set."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest

from core.services import Services
from core.workers.updates import MAX_ATTEMPTS, UpdateQueue


@pytest.fixture
def make_queue(settings, embedder):
    """Queues as separate workers would have them: each its own Services and engine."""
    opened = []

    def build(lease: float = 60.0) -> UpdateQueue:
        svc = Services(
            settings.model_copy(update={"worker_lease_seconds": lease}), embedder=embedder
        )
        opened.append(svc)
        return UpdateQueue(svc)

    yield build
    for svc in opened:
        svc.close()


def _message(update_id: int, chat: int) -> dict:
    return {"update_id": update_id, "message": {"chat": {"id": chat}, "text": f"m{update_id}"}}


def _receive(queue: UpdateQueue, *pairs: tuple[int, int]) -> None:
    for update_id, chat in pairs:
        queue.receive(update_id, str(chat), _message(update_id, chat))


def _wait_for(claim, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        claimed = claim()
        if claimed is not None:
            return claimed
        time.sleep(0.05)
    raise AssertionError("nothing became claimable")


def test_an_update_received_twice_is_stored_once(make_queue):
    queue = make_queue()

    assert queue.receive(7, "42", _message(7, 42)) is True
    assert queue.receive(7, "42", _message(7, 42)) is False

    assert queue.backlog()["pending"] == 1
    claimed = queue.claim()
    assert claimed.update_id == 7 and claimed.payload == _message(7, 42)
    assert queue.claim() is None


def test_a_busy_chat_waits_while_other_chats_go_to_other_workers(make_queue):
    first, second = make_queue(), make_queue()
    _receive(first, (1, 10), (2, 20), (3, 10), (4, 20))

    a = first.claim()
    b = second.claim()
    assert (a.update_id, b.update_id) == (1, 2)
    assert first.claim() is None and second.claim() is None  # both chats are busy

    assert first.complete(1)
    c = second.claim()
    assert (c.update_id, c.chat_key) == (3, "10")  # chat 10 resumes, in order
    assert second.complete(2) and second.complete(3)
    assert first.claim().update_id == 4


def test_a_dead_workers_lease_runs_out_and_another_worker_replays_the_update(make_queue):
    dead, alive = make_queue(lease=0.5), make_queue()
    _receive(dead, (1, 10), (2, 10))
    assert dead.claim().update_id == 1  # ... and then its worker dies

    taken = _wait_for(alive.claim)

    assert (taken.update_id, taken.attempts) == (1, 2)
    assert not dead.complete(1)  # too late: the update is someone else's now
    assert alive.complete(1)
    assert alive.claim().update_id == 2


def test_a_worker_renewing_its_lease_keeps_its_chat(make_queue):
    worker, other = make_queue(lease=1.0), make_queue()
    _receive(worker, (1, 10))
    worker.claim()

    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:
        assert worker.renew() == 1
        assert other.claim() is None
        time.sleep(0.2)
    assert worker.complete(1)


def test_an_update_answered_before_its_worker_died_is_closed_not_replayed(make_queue):
    dead, alive = make_queue(lease=0.5), make_queue()
    _receive(dead, (1, 10), (2, 10))
    dead.claim()
    dead.replied(1)  # the reply went out, then the worker died before closing the update

    taken = _wait_for(alive.claim)

    assert taken.update_id == 2
    assert alive.backlog() == {"pending": 0, "working": 1, "done": 1, "failed": 0}


def test_an_update_that_kills_every_worker_is_given_up(make_queue):
    queue = make_queue(lease=0.5)
    _receive(queue, (1, 10), (2, 10))
    for _ in range(MAX_ATTEMPTS):
        assert _wait_for(queue.claim).update_id == 1  # each time, its worker "dies"

    assert _wait_for(queue.claim).update_id == 2
    assert queue.backlog()["failed"] == 1


def test_workers_claiming_at_once_take_each_update_once_and_each_chat_in_order(make_queue):
    feeder = make_queue()
    chats = 12
    per_chat = 6
    update_id = 0
    for _ in range(per_chat):
        for chat in range(chats):
            update_id += 1
            feeder.receive(update_id, str(chat), _message(update_id, chat))
    handled: dict[str, list[int]] = defaultdict(list)
    taken: list[int] = []
    guard = threading.Lock()
    errors: list[BaseException] = []

    def work(queue: UpdateQueue) -> None:
        try:
            idle_since = time.monotonic()
            while time.monotonic() - idle_since < 2.0:
                claimed = queue.claim()
                if claimed is None:
                    time.sleep(0.01)
                    continue
                idle_since = time.monotonic()
                with guard:
                    taken.append(claimed.update_id)
                    handled[claimed.chat_key].append(claimed.update_id)
                assert queue.complete(claimed.update_id)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(make_queue(),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not errors, errors
    assert sorted(taken) == list(range(1, update_id + 1))  # each exactly once
    for chat, ids in handled.items():
        assert ids == sorted(ids), f"chat {chat} out of order: {ids}"
    assert feeder.backlog()["done"] == update_id
