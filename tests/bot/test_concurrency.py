"""Several chats at once: answered side by side, each in its own order; and the bot, the CLI and
an import writing to one home at the same time lose nothing and spool nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections import Counter

import pytest

from tests.bench.telegram_export import telegram_export
from tests.bot import updates
from tests.bot.support import BotRunner, answers, last_user_text, rows

LEA = updates.user(updates.PARTNER_ID, "fr", "Léa")


async def test_two_chats_are_served_at_once_and_each_keeps_its_order(bot, llm, telegram):
    release, arrived = threading.Event(), threading.Event()
    first = "Question 0 de Camille"
    llm.answer_when(first, "Réponse à Question 0 de Camille", hold=release, arrived=arrived)
    llm.responder = lambda body: f"Réponse à {last_user_text(body)}"
    # More queued messages in one chat than PTB's default number of updates in flight: one
    # busy chat must not take every slot from the others.
    questions = [f"Question {n} de Camille" for n in range(20)]

    for text in questions:
        bot.push(updates.message(text))
    assert await asyncio.to_thread(arrived.wait, 60)  # Camille's first answer is held
    bot.push(updates.message("Question de Léa", LEA))
    lea = await bot.replies(updates.PARTNER_ID, 1)  # ...and Léa is answered meanwhile
    asked = [last_user_text(r) for r in answers(llm)]

    assert [m["text"] for m in lea] == ["Réponse à Question de Léa"]
    assert telegram.messages(42) == []
    assert not set(questions[1:]) & set(asked)  # Camille's next ones wait behind the first
    release.set()
    camille = await bot.replies(42, len(questions))
    assert [m["text"] for m in camille] == [f"Réponse à {q}" for q in questions]


def run_elora(*args: str, cwd) -> subprocess.CompletedProcess:
    """One `elora` command as its own process on the test's home."""
    return subprocess.run(
        [sys.executable, "-m", "core.cli.main", *args],
        env=dict(os.environ), cwd=cwd, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


async def test_bot_cli_writes_and_an_import_share_one_home_without_losing_or_spooling(
    bot, llm, telegram, services, home, tmp_path
):
    export = tmp_path / "result.json"
    export.write_text(json.dumps(telegram_export(3000, chats=6)), encoding="utf-8")
    llm.responder = lambda body: f"Vu : {last_user_text(body)}"
    sent = [f"Message {n} pour le partage de la base" for n in range(12)]

    def remember_loop() -> list[subprocess.CompletedProcess]:
        return [run_elora("remember", f"Fait numéro {n} à garder", cwd=tmp_path) for n in range(4)]

    importing = asyncio.create_task(
        asyncio.to_thread(run_elora, "import", str(export), "--json", cwd=tmp_path)
    )
    remembering = asyncio.create_task(asyncio.to_thread(remember_loop))
    for n, text in enumerate(sent):  # two chats talking while both processes write
        bot.push(updates.message(text, LEA if n % 2 else updates.OPERATOR))
    await bot.replies(42, 6)
    await bot.replies(updates.PARTNER_ID, 6)
    imported, remembered = await importing, await remembering

    assert imported.returncode == 0, imported.stderr
    assert all(r.returncode == 0 for r in remembered), [r.stderr for r in remembered]
    archived = Counter(
        t for (t,) in rows(services, "SELECT text FROM captures WHERE surface = 'telegram' "
                           "AND chat_id IN ('42', ?)", str(updates.PARTNER_ID))
    )  # fmt: skip
    assert all(archived[text] == 1 for text in sent)
    assert all(archived[f"Vu : {text}"] == 1 for text in sent)
    assert not services.spool.files()  # nothing was spooled, by any of the three processes
    facts = rows(services, "SELECT count(*) FROM memory_entries WHERE canonical_text LIKE 'Fait%'")
    assert facts[0][0] == 4
    imported_rows = rows(services, "SELECT count(*) FROM captures WHERE surface != 'telegram' "
                         "OR chat_id NOT IN ('42', ?)", str(updates.PARTNER_ID))  # fmt: skip
    assert imported_rows[0][0] == json.loads(imported.stdout)["stored"] > 2000


@pytest.fixture
async def patient_bot(bot_env, monkeypatch, telegram, make_services):
    """The bot with one work slot (ELORA_WORK_SLOTS) and a long read timeout on its calls to
    Telegram (a held reply stays in transit, it does not fail)."""
    from telegram.request import HTTPXRequest

    monkeypatch.setenv("ELORA_WORK_SLOTS", "1")
    request = HTTPXRequest(connection_pool_size=8, read_timeout=120)
    runner = await BotRunner(telegram, make_services(), request=request).start()
    yield runner
    await runner.stop()


async def test_a_reply_waiting_on_telegram_does_not_hold_the_work_slot(patient_bot, llm, telegram):
    bot = patient_bot
    release, held, other = threading.Event(), threading.Event(), threading.Event()

    def send_message(params) -> None:
        if int(params["chat_id"]) == 42:  # Telegram is slow to take Camille's reply
            held.set()
            release.wait(120)
        else:
            other.set()

    telegram.on("sendMessage", send_message)
    llm.responder = lambda body: f"Réponse à {last_user_text(body)}"
    bot.push(updates.message("Question de Camille"))
    assert await asyncio.to_thread(held.wait, 60)
    bot.push(updates.message("Question de Léa", LEA))

    try:  # Léa is answered with the only work slot while Camille's reply is in transit
        assert await asyncio.to_thread(other.wait, 60)
    finally:
        release.set()
    camille = await bot.replies(42, 1)
    assert [m["text"] for m in camille] == ["Réponse à Question de Camille"]
