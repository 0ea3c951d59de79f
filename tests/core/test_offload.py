"""Blocking work off the event loop, and work slots that a request lends out while it waits on
its model (so model calls overlap) and takes back ahead of requests not yet started."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from core.offload import WorkSlots, beside, run_blocking, waiting_elsewhere

REQUEST = contextvars.ContextVar("request", default=None)


async def test_blocking_calls_run_on_another_thread_with_the_callers_context():
    REQUEST.set("r-42")

    def where() -> tuple[str, str | None]:
        return threading.current_thread().name, REQUEST.get()

    thread, seen = await run_blocking(where)

    assert thread != threading.current_thread().name
    assert seen == "r-42"


async def test_a_request_waiting_on_its_model_lends_its_slot_and_resumes_first():
    slots = WorkSlots(1)
    log: list[str] = []
    model_called, model_answers = asyncio.Event(), asyncio.Event()

    async def with_model(name: str) -> None:
        async with slots.slot():
            log.append(f"{name} works")
            async with waiting_elsewhere():
                model_called.set()
                await model_answers.wait()
            log.append(f"{name} resumes")

    async def plain(name: str, started: asyncio.Event | None = None, hold=None) -> None:
        async with slots.slot():
            log.append(f"{name} works")
            if started is not None:
                started.set()
            if hold is not None:
                await hold.wait()
            log.append(f"{name} done")

    first = asyncio.create_task(with_model("A"))
    await model_called.wait()  # A waits on its model without holding the slot
    b_started, b_hold = asyncio.Event(), asyncio.Event()
    second = asyncio.create_task(plain("B", b_started, b_hold))
    await b_started.wait()
    third = asyncio.create_task(plain("C"))  # queued behind B: the single slot is busy
    await asyncio.sleep(0)
    model_answers.set()  # A wants its slot back: it goes before C
    await asyncio.sleep(0)
    b_hold.set()
    await asyncio.wait_for(asyncio.gather(first, second, third), 10)

    assert log == ["A works", "B works", "B done", "A resumes", "C works", "C done"]
    assert slots.busy == 0


async def test_outside_a_slot_waiting_elsewhere_changes_nothing():
    async with waiting_elsewhere():
        pass


def test_work_beside_the_caller_runs_on_another_thread_at_once_with_its_context():
    REQUEST.set("r-7")
    started, release = threading.Event(), threading.Event()

    def part() -> tuple[str, str | None]:
        started.set()
        assert release.wait(10)  # the caller goes on meanwhile
        return threading.current_thread().name, REQUEST.get()

    future = beside(part)
    assert started.wait(10)
    assert not future.done()
    release.set()
    thread, seen = future.result(10)

    assert thread != threading.current_thread().name
    assert seen == "r-7"


def test_work_beside_reraises_for_whoever_asks():
    def failing() -> None:
        raise ValueError("no such chat")

    with pytest.raises(ValueError, match="no such chat"):
        beside(failing).result(10)


def test_work_started_beside_runs_beside_too_and_the_level_below_runs_in_place():
    def name() -> str:
        return threading.current_thread().name

    def inner() -> tuple[str, str, bool]:
        innermost = beside(name)
        done = innermost.done()  # the last level never waits for a pool
        return name(), innermost.result(), done

    def outer() -> tuple[str, tuple[str, str, bool]]:
        return name(), beside(inner).result(10)

    outer_thread, (inner_thread, innermost_thread, done) = beside(outer).result(10)

    assert len({threading.current_thread().name, outer_thread, inner_thread}) == 3
    assert innermost_thread == inner_thread and done
