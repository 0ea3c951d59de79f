"""Bot fixtures: the scripted model server (one per run, so LiteLLM is imported once), a fresh
FakeTelegram per test, services on the tmp home, and the running bot."""

from __future__ import annotations

import pytest

from tests.bot.support import LLM_KEY, TOKEN, BotRunner, ScriptedLLM
from tests.bot.updates import OPERATOR_ID, PARTNER_ID
from tests.telegram_server import FakeTelegram


@pytest.fixture(scope="session")
def llm_server():
    """One scripted OpenAI-compatible server for the whole run."""
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def llm(llm_server):
    """The scripted server with empty queues and logs."""
    llm_server.reset()
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
        "ELORA_MODEL_LITE": "openai/fake-lite",
        "ELORA_LLM_API_BASE": llm.base_url,
        "ELORA_LLM_API_KEY": LLM_KEY,
        "ELORA_LLM_RETRIES": "0",
        "ELORA_LEARNING_EXTRACTOR": "heuristic",
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "ELORA_TELEGRAM_ALLOWED_USERS": f"{OPERATOR_ID},{PARTNER_ID}",
        "ELORA_TELEGRAM_BASE_URL": telegram.base_url,
    }
    monkeypatch.delenv("ELORA_TELEGRAM_BOT_TOKEN", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def make_services(bot_env, embedder):
    """Build Services on the tmp home (after any extra env a test sets); closed after."""
    from core.config import load_settings
    from core.services import Services

    opened = []

    def build():
        svc = Services(load_settings(), embedder=embedder)
        opened.append(svc)
        return svc

    yield build
    for svc in opened:
        svc.close()


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
