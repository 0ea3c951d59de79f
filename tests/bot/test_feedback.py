"""👍/👎 on a reply (a reaction, or a button where reactions don't reach bots) updates the
capability profile for that reply's trace."""

from __future__ import annotations

import pytest

from bot.i18n import TEXTS
from tests.bot import updates
from tests.bot.support import rows


def task_profile(services) -> dict | None:
    """The profile row of the 'task' dimension (every scripted message classifies as a task)."""
    return next((d for d in services.profile.all() if d["dimension"] == "task"), None)


def trace_of(services, telegram_message: dict):
    """The trace behind a reply the bot sent."""
    chat_id = str(telegram_message["chat"]["id"])
    trace_id = services.chats.trace_for("telegram", chat_id, str(telegram_message["message_id"]))
    return services.traces.get(trace_id)


async def test_reactions_on_replies_feed_the_profile_for_their_trace(bot, llm, services):
    llm.answer_when("Premier", "Réponse une.")
    llm.answer_when("Second", "Réponse deux.")
    first = await bot.say("Premier message")
    second = await bot.say("Second message")
    assert task_profile(services) is None

    bot.push(updates.reaction(first, "👍"))
    await bot.settle()

    assert [f["signal"] for f in trace_of(services, first).feedback] == ["up"]
    assert trace_of(services, second).feedback == []
    assert task_profile(services)["p"] == pytest.approx(0.6)

    bot.push(updates.reaction(second, "👎"))
    await bot.settle()

    assert [f["signal"] for f in trace_of(services, second).feedback] == ["down"]
    assert task_profile(services)["p"] == pytest.approx(0.48)
    assert task_profile(services)["samples"] == 2


async def test_reactions_elsewhere_change_nothing(bot, llm, services):
    reply = await bot.say("Bonjour Elora")
    someone_elses = {**reply, "message_id": reply["message_id"] + 1000}

    bot.push(updates.reaction(reply, "🤔"))  # neither up nor down
    bot.push(updates.reaction(someone_elses, "👍"))  # not a reply of Elora's
    await bot.settle()

    assert task_profile(services) is None
    assert all(r[0] == "[]" for r in rows(services, "SELECT feedback FROM traces"))


@pytest.fixture
def buttons_always(monkeypatch, bot_env):
    monkeypatch.setenv("ELORA_TELEGRAM_FEEDBACK_BUTTONS", "always")


async def test_feedback_buttons_feed_the_profile_and_disappear(buttons_always, bot, llm, services):
    reply = await bot.say("Bonjour Elora")
    (up, up_data), (down, _) = updates.buttons(reply)
    assert (up, down) == ("👍", "👎")

    removed = await bot.press(reply, up_data, then="editMessageReplyMarkup")

    assert int(removed["message_id"]) == reply["message_id"]
    assert not removed.get("reply_markup", {}).get("inline_keyboard")
    answered = bot.telegram.calls_to("answerCallbackQuery")[-1]
    assert answered["text"] == TEXTS["fr"]["thanks_feedback"]
    assert [f["signal"] for f in trace_of(services, reply).feedback] == ["up"]
    assert task_profile(services)["p"] == pytest.approx(0.6)


async def test_buttons_appear_in_groups_where_reactions_do_not_reach_bots(bot, llm):
    private_reply = await bot.say("Bonjour Elora")
    group_reply = await bot.say("Bonjour Elora", chat=updates.group_chat())

    assert updates.buttons(private_reply) == []
    assert [label for label, _ in updates.buttons(group_reply)] == ["👍", "👎"]
