"""Cockpit fixtures: real stores on a tmp home, the local OpenAI-compatible server as every
model tier, a pinned clock, and the real app built on them (scheduler off)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cockpit.support import MODELS, FixedClock
from tests.llm_server import FakeLLMServer


@pytest.fixture(scope="session")
def llm_server():
    """One fake OpenAI-compatible server for the run (LiteLLM is imported once)."""
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm(llm_server, home, monkeypatch):
    """The fake server with empty queues, configured as LITE/FLASH/PRO through ELORA_* vars."""
    llm_server.reset()
    for tier, name in MODELS.items():
        monkeypatch.setenv(f"ELORA_MODEL_{tier}", f"openai/{name}")
    monkeypatch.setenv("ELORA_LLM_API_BASE", llm_server.base_url)
    monkeypatch.setenv("ELORA_LLM_API_KEY", "test-key-123456")
    monkeypatch.setenv("ELORA_LLM_RETRIES", "0")
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "heuristic")
    return llm_server


@pytest.fixture
def clock():
    """The clock every service reads."""
    return FixedClock()


@pytest.fixture
def make_services(llm, embedder, clock):
    """Build Services on the tmp home (a second one plays the bot beside the cockpit)."""
    from core.config import load_settings
    from core.services import Services

    opened = []

    def build() -> Services:
        svc = Services(load_settings(), clock=clock, embedder=embedder)
        opened.append(svc)
        return svc

    yield build
    for svc in opened:
        svc.close()


@pytest.fixture
def services(make_services):
    """The services the cockpit is started with."""
    return make_services()


@pytest.fixture
def cockpit(services):
    """Build the real app on the services; periodic refresh is off unless a test asks for it."""
    from cockpit.app import Cockpit

    def build(**options: Any) -> Cockpit:
        options.setdefault("refresh_seconds", None)
        return Cockpit(services, scheduler=False, **options)

    return build
