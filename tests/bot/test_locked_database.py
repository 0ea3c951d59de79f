"""A database locked by someone else while messages arrive: every answer still reaches its
reader (with at most one short note), and the capture, the answer and the trace are saved
exactly once as soon as the lock goes, without waiting for the scheduled replay job."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from bot.i18n import TEXTS
from tests.bot import updates
from tests.bot.support import BotRunner, rows
from tests.databases import locked

BUSY_MS = 300  # a short busy timeout: the lock below outlasts it
WAIT = 60.0


async def wait_until(predicate, what: str, timeout: float = WAIT) -> None:
    """Poll the database (off the loop) until predicate() holds."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(predicate):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def saved(services, text: str, role: str) -> int:
    """How many archived messages have exactly this text and role."""
    found = rows(services, "SELECT count(*) FROM captures WHERE text = ? AND role = ?", text, role)
    return found[0][0]


def traces_of(services, capture_text: str) -> int:
    """How many traces belong to the exchange that started with this message."""
    found = rows(
        services,
        "SELECT count(*) FROM traces t JOIN captures c ON c.id = t.capture_id WHERE c.text = ?",
        capture_text,
    )
    return found[0][0]


def ask(text: str, cwd) -> subprocess.CompletedProcess:
    """`elora ask TEXT` as its own process on the same home (env from the bot's settings)."""
    return subprocess.run(
        [sys.executable, "-m", "core.cli.main", "ask", text],
        env=dict(os.environ), cwd=cwd, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


async def test_a_locked_database_answers_once_and_saves_everything_once_it_is_released(
    make_services, telegram, llm, tmp_path
):
    services = make_services(DB_BUSY_TIMEOUT_MS=BUSY_MS)
    bot = await BotRunner(telegram, services).start()
    try:
        llm.answer_when("Premier message", "Bien reçu.")
        await bot.say("Premier message")  # the home exists and the pipeline is warm
        llm.answer_when("Le dentiste est jeudi", "Noté pour jeudi.")
        llm.answer_when("Et le plombier", "Vendredi à 9 h.")

        with locked(services):  # another process holds the write lock
            bot.push(updates.message("Le dentiste est jeudi à 10 h."))
            await bot.replies(42, 2)
            cli = await asyncio.to_thread(ask, "Et le plombier ?", tmp_path)
            await bot.settle()  # the bot handled everything it was sent
            assert saved(services, "Noté pour jeudi.", "assistant") == 0  # still locked out

        await wait_until(
            lambda: (
                traces_of(services, "Le dentiste est jeudi à 10 h.") == 1
                and traces_of(services, "Et le plombier ?") == 1
            ),
            "the spooled exchanges to be replayed",
        )
    finally:
        await bot.stop()

    sent = [m["text"] for m in telegram.messages(42) if "/council" not in m["text"]]  # no help
    note = TEXTS["fr"]["saving_delayed"]
    assert sent in (["Bien reçu.", "Noté pour jeudi."], ["Bien reçu.", "Noté pour jeudi.", note])
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() == "Vendredi à 9 h."
    assert len([line for line in cli.stderr.splitlines() if line.strip()]) <= 1
    for question, answer in (
        ("Le dentiste est jeudi à 10 h.", "Noté pour jeudi."),
        ("Et le plombier ?", "Vendredi à 9 h."),
    ):
        assert saved(services, question, "user") == 1
        assert saved(services, answer, "assistant") == 1
        assert traces_of(services, question) == 1
    assert services.spool.backlog() == 0
