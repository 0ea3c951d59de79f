"""A burst of messages in one chat: every message is answered, and learning reads them a few
exchanges per LITE extraction call instead of one call each."""

from __future__ import annotations

import asyncio
import threading

import pytest

from bot.processor import OrderedPerChat
from core.learning.engine import BATCH
from tests.bot import updates
from tests.core.learning.support import extraction

MARK = "worth remembering"


@pytest.fixture
def model_extraction(bot_env, monkeypatch):
    """Learning through the LITE model (the bot tests' default is the heuristics)."""
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "model")


async def test_a_queued_burst_is_learned_a_few_exchanges_per_extraction_call(
    model_extraction, bot, llm, telegram
):
    notes = [f"Note {n} : le colis numéro {n} arrive mardi." for n in range(BATCH + 2)]
    release, arrived = threading.Event(), threading.Event()
    llm.answer_when(MARK, extraction())  # first: an extraction prompt quotes the notes too
    llm.answer_when(notes[0], "Noté pour le colis 0.", hold=release, arrived=arrived)
    llm.default_text = "Noté."

    for text in notes:
        bot.push(updates.message(text))
    assert await asyncio.to_thread(arrived.wait, 60)  # the first answer is held...
    processor = bot.app.update_processor
    # One process on SQLite sees the chat's queue; PostgreSQL workers claim a chat's updates
    # one at a time from the shared queue, so each exchange is learned on its own there.
    sees_queue = isinstance(processor, OrderedPerChat)
    if sees_queue:
        await bot.until(  # ...until the whole burst waits behind it
            lambda: len(processor._turns.get(updates.OPERATOR_ID, (None, []))[1]) == len(notes),
            "the burst queued in the chat",
        )
    release.set()
    await bot.replies(updates.OPERATOR_ID, len(notes))

    def prompts() -> list[str]:
        with llm.lock:
            texts = [r["messages"][-1]["content"] for r in llm.requests]
        return [t for t in texts if MARK in t]

    # Every note read exactly once: the first BATCH together, then the rest when the burst ended.
    expected = (
        [list(range(BATCH)), list(range(BATCH, len(notes)))]
        if sees_queue
        else [[n] for n in range(len(notes))]
    )
    # The last exchange is learned after its reply is sent, with what still waited.
    await bot.until(lambda: len(prompts()) >= len(expected), "the burst's extraction calls")
    assert [[n for n, note in enumerate(notes) if note in p] for p in prompts()] == expected


async def test_the_answer_is_sent_before_the_exchange_is_learned_and_traced(
    model_extraction, bot, llm, telegram, services
):
    release, arrived = threading.Event(), threading.Event()
    llm.answer_when(
        MARK,
        extraction({"text": "Camille prend le train de 8 h le lundi", "kind": "fact",
                    "topics": ["transport"], "importance": 3, "confidence": 0.9,
                    "temporality": "current", "messages": [1]}),
        hold=release, arrived=arrived,
    )  # fmt: skip
    llm.default_text = "Bien noté."

    bot.push(updates.message("Je prends le train de 8 h tous les lundis."))
    try:  # the extraction call is held: the answer reaches the chat all the same
        [sent] = await bot.replies(updates.OPERATOR_ID, 1)
        assert await asyncio.to_thread(arrived.wait, 60)
        assert services.proposals.count() == 0
    finally:
        release.set()
    await bot.until(lambda: services.proposals.count() == 1, "the exchange learned")
    trace_id = services.chats.trace_for("telegram", "42", str(sent["message_id"]))
    await bot.until(lambda: services.traces.get(trace_id) is not None, "its trace stored")
    trace = services.traces.get(trace_id)  # the id the reply was sent with
    [proposal] = services.proposals.list(None, limit=10)
    assert trace.learning["proposals"] == [proposal.id]
    with llm.lock:
        requests = len(llm.requests)
    assert len(trace.models) == requests  # the extraction call after the reply included
