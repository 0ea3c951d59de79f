"""Bot fixtures: the shared fake model server (tests/conftest.py) with the classifier's answer
standing, a fresh FakeTelegram per test, services on the tmp home, and the running bot."""

from __future__ import annotations

import pytest

from tests.bot.support import CLASSIFIER_MARK, LLM_KEY, TOKEN, VERDICT, BotRunner
from tests.bot.updates import OPERATOR_ID, PARTNER_ID
from tests.llm_server import model_env
from tests.telegram_server import FakeTelegram


@pytest.fixture
def llm(llm_server):
    """The shared server (tests/conftest.py) with empty queues and logs; the classifier always
    says VERDICT."""
    llm_server.reset()
    llm_server.answer_when(CLASSIFIER_MARK, VERDICT)
    return llm_server


@pytest.fixture
def telegram():
    """A fake Bot API server for this test."""
    fake = FakeTelegram(TOKEN).start()
    yield fake
    fake.stop()


@pytest.fixture
def bot_env(home, llm, telegram, monkeypatch):
    """Every setting the bot reads, pointing at the two fakes; returns the env as a dict."""
    env = {
        **model_env(llm.base_url, models={"LITE": "fake-lite"}, key=LLM_KEY),
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "ELORA_TELEGRAM_ALLOWED_USERS": f"{OPERATOR_ID},{PARTNER_ID}",
        "ELORA_TELEGRAM_BASE_URL": telegram.base_url,
    }
    monkeypatch.delenv("ELORA_TELEGRAM_BOT_TOKEN", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def make_services(bot_env, make_services):
    """Build Services on the tmp home (after the bot's env and any extra a test sets); closed
    after (tests/conftest.py)."""
    return make_services


@pytest.fixture
def services(make_services):
    """The services the bot is built with."""
    return make_services()


@pytest.fixture
async def bot(telegram, services):
    """The real Application, long polling FakeTelegram."""
    runner = await BotRunner(telegram, services).start()
    yield runner
    await runner.stop()


@pytest.fixture(autouse=True)
def _restore_logging():
    """Commands under test install Elora's stderr handler; take it away again afterwards."""
    import logging

    root = logging.getLogger()
    level = root.level
    yield
    for handler in list(root.handlers):
        if getattr(handler, "_elora", False):
            root.removeHandler(handler)
    root.setLevel(level)
