"""The update processor: one chat in order, chats side by side, no update handled twice."""

from __future__ import annotations

import asyncio

import pytest
from telegram import Bot, Update

from bot.processor import OrderedPerChat, next_is_message
from tests.bot import updates
from tests.bot.support import TOKEN

LEA = updates.user(updates.PARTNER_ID, "fr", "Léa")


@pytest.fixture
def bot_object():
    """A Bot to attach updates to; nothing here calls Telegram."""
    return Bot(TOKEN)


def update(bot_object, update_id: int, data: dict) -> Update:
    """An Update from real JSON."""
    return Update.de_json({"update_id": update_id, **data}, bot_object)


@pytest.fixture
async def processor(services):
    processor = OrderedPerChat(services)
    await processor.initialize()
    yield processor
    await processor.shutdown()


async def step(
    log: list[str],
    name: str,
    gate: asyncio.Event | None = None,
    started: asyncio.Event | None = None,
) -> None:
    """A handler run: logs its start and end, and waits for `gate` in between."""
    log.append(f"start {name}")
    if started is not None:
        started.set()
    if gate is not None:
        await gate.wait()
    log.append(f"end {name}")


async def test_one_chat_waits_its_turn_while_another_chat_goes_ahead(processor, bot_object):
    log: list[str] = []
    gate, started = asyncio.Event(), asyncio.Event()
    first = update(bot_object, 1, updates.message("un"))
    second = update(bot_object, 2, updates.message("deux"))
    other = update(bot_object, 3, updates.message("salut", LEA))

    runs = [asyncio.create_task(processor.process_update(first, step(log, "un", gate, started)))]
    await asyncio.wait_for(started.wait(), 10)
    runs.append(asyncio.create_task(processor.process_update(second, step(log, "deux"))))
    await asyncio.wait_for(processor.process_update(other, step(log, "salut")), 10)

    assert log == ["start un", "start salut", "end salut"]  # "deux" waits behind "un"
    gate.set()
    await asyncio.wait_for(asyncio.gather(*runs), 10)
    assert log[3:] == ["end un", "start deux", "end deux"]


async def test_at_most_the_configured_number_of_chats_run_at_once(services, bot_object):
    processor = OrderedPerChat(services, max_chats=2)
    log: list[str] = []
    gate = asyncio.Event()
    both = [asyncio.Event(), asyncio.Event()]
    people = [updates.user(100 + n, "fr", f"P{n}") for n in range(3)]
    runs = [
        asyncio.create_task(
            processor.process_update(
                update(bot_object, 10 + n, updates.message("hop", person)),
                step(log, f"chat{n}", gate, both[n] if n < 2 else None),
            )
        )
        for n, person in enumerate(people)
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in both)), 10)

    assert sorted(log) == ["start chat0", "start chat1"]  # the third chat waits for a slot
    assert processor.in_flight == 2
    gate.set()
    await asyncio.wait_for(asyncio.gather(*runs), 10)
    assert processor.peak_in_flight == 2
    assert sorted(log) == sorted(f"{w} chat{n}" for n in range(3) for w in ("start", "end"))


async def test_an_update_seen_before_is_not_handled_again_even_after_a_restart(
    processor, services, bot_object
):
    log: list[str] = []
    message = updates.message("une fois")

    await processor.process_update(update(bot_object, 7, message), step(log, "first"))
    again = step(log, "again")
    await processor.process_update(update(bot_object, 7, message), again)
    restarted = OrderedPerChat(services)
    await restarted.process_update(update(bot_object, 7, message), step(log, "restart"))

    assert log == ["start first", "end first"]
    assert again.cr_frame is None  # closed, never left un-awaited
    assert services.chats.already_handled("telegram", 7)
    assert not services.chats.already_handled("telegram", 8)


async def test_a_handler_knows_whether_its_chat_has_a_plain_message_waiting(processor, bot_object):
    seen: dict[str, bool] = {}
    gate, started = asyncio.Event(), asyncio.Event()

    async def handler(name: str, wait: bool = False) -> None:
        if wait:
            started.set()
            await gate.wait()
        seen[name] = next_is_message()()  # asked late, as learning asks it

    first = update(bot_object, 21, updates.message("un"))
    run = asyncio.create_task(processor.process_update(first, handler("un", wait=True)))
    await asyncio.wait_for(started.wait(), 10)
    runs = [
        run,
        asyncio.create_task(
            processor.process_update(
                update(bot_object, 22, updates.message("deux")), handler("deux")
            )
        ),
        asyncio.create_task(
            processor.process_update(
                update(bot_object, 23, updates.message("/forget wifi")), handler("forget")
            )
        ),
        asyncio.create_task(
            processor.process_update(
                update(bot_object, 24, updates.message("trois")), handler("trois")
            )
        ),
        asyncio.create_task(
            processor.process_update(
                update(bot_object, 25, updates.message("autre chat", LEA)), handler("lea")
            )
        ),
    ]
    await asyncio.wait_for(asyncio.gather(*runs[4:]), 10)  # Léa's chat is served meanwhile
    gate.set()
    await asyncio.wait_for(asyncio.gather(*runs), 10)

    # "un" has "deux" behind it; "deux" has a command behind it (the command runs first:
    # nothing said before a /forget may be learned after it); the last of a chat has nothing.
    assert seen == {"un": True, "deux": False, "forget": True, "trois": False, "lea": False}
    assert next_is_message() is None  # outside an update
