"""Handlers driven directly with PTB Update objects built from real Bot API JSON (no polling)."""

from __future__ import annotations

import itertools

import pytest
from telegram import Update

from bot.context import EloraContext
from bot.i18n import TEXTS
from tests.bot import updates

STRANGER = updates.user(updates.STRANGER_ID, "en", "Mallory")
_update_ids = itertools.count(1)


@pytest.fixture
async def app(telegram, services):
    """The real Application, initialised against FakeTelegram but not polling."""
    from bot.app import build_application

    application = build_application(services, scheduler=False)
    async with application:
        yield application


async def handle(app, data: dict) -> Update:
    """Build an Update from JSON and run it through every handler group, to completion."""
    update = Update.de_json({"update_id": next(_update_ids), **data}, app.bot)
    await app.process_update(update)
    return update


def sent(telegram) -> list[tuple[str, str]]:
    """(method, text) of every reply-like call the bot made."""
    return [
        (name, params.get("text"))
        for name, params in telegram.calls
        if name in ("sendMessage", "answerCallbackQuery")
    ]


async def test_an_allowlisted_user_reaches_the_command_handlers(app, telegram):
    await handle(app, updates.message("/help"))

    assert sent(telegram) == [("sendMessage", TEXTS["fr"]["help"])]


async def test_a_stranger_in_private_is_refused_once_and_handled_no_further(app, telegram):
    await handle(app, updates.message("/help", STRANGER))

    assert sent(telegram) == [("sendMessage", TEXTS["en"]["refused"])]


async def test_a_stranger_in_a_group_is_ignored_silently(app, telegram):
    await handle(app, updates.message("/help", STRANGER, updates.group_chat()))

    assert sent(telegram) == []


async def test_a_strangers_button_press_gets_an_alert(app, telegram):
    shown = {"message_id": 9, "date": 0, "chat": updates.private_chat(STRANGER), "text": "…"}

    await handle(app, updates.callback(shown, "fg:y:abcd1234:0", STRANGER))

    (answer,) = telegram.calls_to("answerCallbackQuery")
    assert answer["text"] == TEXTS["en"]["refused"] and answer["show_alert"] is True
    assert telegram.calls_to("editMessageText") == []


async def test_an_update_without_a_user_is_refused_silently(app, telegram):
    channel = {"id": -100777, "type": "channel", "title": "Annonces"}
    post = {"message_id": 3, "date": 0, "chat": channel, "text": "/help"}

    await handle(app, {"channel_post": post})

    assert sent(telegram) == []


@pytest.mark.parametrize(
    ("language_code", "expected"),
    [("fr", "fr"), ("fr-BE", "fr"), ("en-US", "en"), ("es", "en"), (None, "en")],
)
async def test_the_context_speaks_the_users_language(app, language_code, expected):
    person = updates.user(updates.OPERATOR_ID, language_code)
    update = Update.de_json({"update_id": 1, **updates.message("/new", person)}, app.bot)

    context = EloraContext.from_update(update, app)

    assert context.lang(update) == expected
    assert context.say(update, "new") == TEXTS[expected]["new"]
