"""A burst of messages in one chat: every message is answered, and learning reads them a few
exchanges per LITE extraction call instead of one call each."""

from __future__ import annotations

import asyncio
import threading

import pytest

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
    await bot.until(  # ...until the whole burst waits behind it
        lambda: len(processor._turns.get(updates.OPERATOR_ID, (None, []))[1]) == len(notes),
        "the burst queued in the chat",
    )
    release.set()
    await bot.replies(updates.OPERATOR_ID, len(notes))  # the last exchange learns before it

    with llm.lock:
        prompts = [r["messages"][-1]["content"] for r in llm.requests]
    prompts = [p for p in prompts if MARK in p]
    # Every note read exactly once: the first BATCH together, then the rest when the burst ended.
    assert [[n for n, note in enumerate(notes) if note in p] for p in prompts] == [
        list(range(BATCH)),
        list(range(BATCH, len(notes))),
    ]
