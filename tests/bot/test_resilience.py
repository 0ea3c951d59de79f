"""Telegram hiccups, restarts and handler failures lose nothing, repeat nothing, leak nothing."""

from __future__ import annotations

import pytest
from telegram.error import RetryAfter

from bot.i18n import TEXTS
from core.logs import setup_logging
from tests.bot import updates
from tests.bot.support import LLM_KEY, TOKEN, BotRunner, answers, last_user_text, scalar


@pytest.fixture
def flaky_polling(telegram):
    """Telegram answers the first two getUpdates with 502 Bad Gateway."""
    telegram.fail("getUpdates", 502, times=2)


async def test_polling_recovers_from_bad_gateways_without_losing_or_repeating_updates(
    flaky_polling, bot, llm, telegram
):
    for n in (1, 2, 3):
        llm.answer_when(f"message {n}", f"réponse {n}")
        bot.push(updates.message(f"message {n}"))

    await bot.replies(42, 3)
    await bot.settle()

    assert len(telegram.calls_to("getUpdates!502")) == 2
    texts = [m["text"] for m in telegram.messages(42)]
    assert texts[:3] == ["réponse 1", "réponse 2", "réponse 3"]
    assert len(texts) == 4  # the three answers and the help text, nothing twice


async def test_a_restart_does_not_answer_redelivered_updates_again_but_keeps_the_conversation(
    telegram, llm, make_services
):
    first_run = await BotRunner(telegram, make_services()).start()
    llm.answer_when("Mon train part", "Bon voyage.")
    llm.answer_when("Je reviens", "À dimanche.")
    handled = [updates.message("Mon train part à 8 h."), updates.message("Je reviens dimanche.")]
    ids = [telegram.push(u) for u in handled]
    await first_run.replies(42, 2)
    await first_run.stop()
    first_run.services.close()

    # Telegram never got the final offset (a crash) and delivers the same updates again.
    for update_id, update in zip(ids, handled, strict=True):
        telegram.push({"update_id": update_id, **update})
    second_run = await BotRunner(telegram, make_services()).start()
    try:
        llm.answer_when("À quelle heure part mon train", "À 8 h.")
        reply = await second_run.say("À quelle heure part mon train ?")
    finally:
        await second_run.stop()

    assert reply["text"] == "À 8 h."
    assert [m["text"] for m in telegram.messages(42)] == ["Bon voyage.", "À dimanche.", "À 8 h."]
    asked = [last_user_text(r) for r in answers(llm)]
    assert asked.count("Mon train part à 8 h.") == 1
    window = [m["content"] for m in answers(llm)[-1]["messages"]]
    assert "Mon train part à 8 h." in window and "Bon voyage." in window


async def test_a_failing_handler_apologises_and_logs_the_traceback_without_secrets(
    bot, llm, telegram, services, monkeypatch, capsys
):
    setup_logging("WARNING", services.settings.secrets())

    # (A failing recall no longer fails the reply, it answers without memory: the classifier
    # stands in for any other step of the pipeline that can break.)
    async def broken_classifier(*args, **kwargs):
        raise RuntimeError(f"index corrupted (token {TOKEN}, key {LLM_KEY})")

    monkeypatch.setattr("core.pipeline.classify_request", broken_classifier)

    reply = await bot.say("Qu'est-ce que je fais demain ?")

    assert reply["text"] == TEXTS["fr"]["apology"]
    assert len(telegram.messages(42)) == 1
    logged = capsys.readouterr().err
    assert "Traceback" in logged and "RuntimeError: index corrupted" in logged
    assert TOKEN not in logged and TOKEN.split(":")[1] not in logged and LLM_KEY not in logged
    # The apology says the message is saved: it is.
    assert scalar(services, "SELECT count(*) FROM captures WHERE text = ?",
                  "Qu'est-ce que je fais demain ?") == 1  # fmt: skip


async def test_flood_control_gets_no_apology_that_would_hit_the_same_limit(
    bot, llm, telegram, monkeypatch, caplog
):
    async def flooded(*args, **kwargs):
        raise RetryAfter(30)

    monkeypatch.setattr("core.pipeline.classify_request", flooded)

    bot.push(updates.message("Qu'est-ce que je fais demain ?"))
    await bot.settle()

    texts = [m["text"] for m in telegram.messages(42)]
    assert TEXTS["fr"]["apology"] not in texts
    assert "Telegram flood control" in caplog.text
