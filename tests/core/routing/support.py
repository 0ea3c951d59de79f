"""Fixtures shared by the routing and pipeline tests: the fake LLM server, a movable clock,
services wired to both, and a one-line way to send a message through the real pipeline."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from core.pipeline import Reply, Request
from tests.fakes import FixedClock as BaseFixedClock
from tests.llm_server import FakeLLMServer

# A Friday morning; traces and spend are dated from it.
NOW = datetime(2025, 3, 14, 9, 30)

MODELS = {"LITE": "fake-lite", "FLASH": "fake-flash", "PRO": "fake-pro"}


class MovableClock(BaseFixedClock):
    """Pinned to this module's NOW unless told otherwise."""

    def __init__(self, moment: datetime = NOW):
        super().__init__(moment)


@pytest.fixture(scope="session")
def llm_server():
    """One fake OpenAI-compatible server for the whole run (LiteLLM is imported once)."""
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
    monkeypatch.setenv("ELORA_LLM_API_KEY", "test-key")
    monkeypatch.setenv("ELORA_LLM_RETRIES", "0")
    # Learning after each exchange would add a LITE extraction call; the learning tests own that.
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "heuristic")
    return llm_server


@pytest.fixture
def clock():
    """The clock every service reads."""
    return MovableClock()


@pytest.fixture
def make_services(llm, embedder, clock, monkeypatch):
    """Build Services after setting more ELORA_* variables (None unsets one); closed after."""
    from core.config import load_settings
    from core.services import Services

    opened = []

    def build(**env: Any):
        for key, value in env.items():
            if value is None:
                monkeypatch.delenv(f"ELORA_{key}", raising=False)
            else:
                monkeypatch.setenv(f"ELORA_{key}", str(value))
        svc = Services(load_settings(), clock=clock, embedder=embedder)
        opened.append(svc)
        return svc

    yield build
    for svc in opened:
        svc.close()


@pytest.fixture
def services(make_services):
    """Services with the three fake tiers configured."""
    return make_services()


async def ask(services, text: str, chat_id: str = "c1", **fields: Any) -> Reply:
    """Send one operator message through the real pipeline."""
    request = Request(surface="cli", chat_id=chat_id, text=text, user_id="operator",
                      sender="operator", **fields)  # fmt: skip
    return await services.assistant.handle(request)


def messages_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat messages of one request the server received."""
    return request["messages"]


def system_of(request: dict[str, Any]) -> str:
    """The first system message of a request (prompt + evidence pack)."""
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results sent back to the model in a request, parsed."""
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def tool_names(request: dict[str, Any]) -> list[str]:
    """The tools offered in a request (empty when none)."""
    return [t["function"]["name"] for t in request.get("tools") or []]


def captures(services) -> int:
    """How many messages the archive holds."""
    return services.archive.counts()["captures"]
