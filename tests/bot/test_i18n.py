"""The bot speaks French to French-speaking users and English to everyone else, unless told."""

from __future__ import annotations

import re

import pytest

from bot.i18n import COMMANDS, TEXTS, language_of
from tests.bot import updates


@pytest.mark.parametrize(
    ("language_code", "setting", "expected"),
    [
        ("fr", "auto", "fr"),
        ("fr-CA", "auto", "fr"),
        ("FR", "auto", "fr"),
        ("en", "auto", "en"),
        ("de", "auto", "en"),
        (None, "auto", "en"),
        ("en", "fr", "fr"),
        ("fr", "en", "en"),
    ],
)
def test_language_comes_from_the_users_telegram_language_unless_overridden(
    language_code, setting, expected
):
    assert language_of(language_code, setting) == expected


def test_every_text_exists_in_both_languages_with_the_same_placeholders():
    assert TEXTS["fr"].keys() == TEXTS["en"].keys()
    for key in TEXTS["en"]:
        fields = {lang: sorted(re.findall(r"\{(\w+)", TEXTS[lang][key])) for lang in TEXTS}
        assert fields["fr"] == fields["en"], key
    assert [name for name, _ in COMMANDS["fr"]] == [name for name, _ in COMMANDS["en"]]


async def test_help_and_confirmations_follow_each_users_language(bot):
    english = updates.user(updates.PARTNER_ID, "en-GB", "Sam")

    assert (await bot.say("/help"))["text"] == TEXTS["fr"]["help"]
    assert (await bot.say("/private on"))["text"] == TEXTS["fr"]["private_on"]
    assert (await bot.say("/help", english))["text"] == TEXTS["en"]["help"]
    assert (await bot.say("/private maybe", english))["text"] == TEXTS["en"]["private_usage"]


@pytest.fixture
def english_only(monkeypatch, bot_env):
    monkeypatch.setenv("ELORA_TELEGRAM_LANGUAGE", "en")


async def test_the_configured_language_overrides_the_users(english_only, bot):
    stranger = updates.user(updates.STRANGER_ID, "fr", "Mallory")

    assert (await bot.say("/help"))["text"] == TEXTS["en"]["help"]
    assert (await bot.say("bonjour", stranger))["text"] == TEXTS["en"]["refused"]


async def test_a_french_stranger_is_refused_in_french(bot):
    stranger = updates.user(updates.STRANGER_ID, "fr", "Mallory")

    assert (await bot.say("bonjour", stranger))["text"] == TEXTS["fr"]["refused"]


async def test_commands_are_published_in_english_by_default_and_in_french(bot, telegram):
    published = {c.get("language_code"): c["commands"] for c in telegram.calls_to("setMyCommands")}

    assert set(published) == {None, "fr"}
    assert published[None] == [{"command": n, "description": d} for n, d in COMMANDS["en"]]
    assert published["fr"] == [{"command": n, "description": d} for n, d in COMMANDS["fr"]]
    assert {c["command"] for c in published[None]} == {
        "start", "help", "new", "remember", "forget", "topics", "proposals", "council",
        "private", "status",
    }  # fmt: skip
