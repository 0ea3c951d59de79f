"""Fixtures shared by the routing and pipeline tests: a movable clock, services wired to it and
to the fake LLM server (`llm`, `make_services`: tests/conftest.py), and a one-line way to send a
message through the real pipeline."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from core.pipeline import Reply, Request
from tests.fakes import FixedClock as BaseFixedClock

# A Friday morning; traces and spend are dated from it.
NOW = datetime(2025, 3, 14, 9, 30)


class MovableClock(BaseFixedClock):
    """Pinned to this module's NOW unless told otherwise."""

    def __init__(self, moment: datetime = NOW):
        super().__init__(moment)


@pytest.fixture
def clock():
    """The clock every service reads."""
    return MovableClock()


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
