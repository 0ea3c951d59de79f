"""Cockpit fixtures: real stores on a tmp home, the local OpenAI-compatible server as every
model tier, a pinned clock, and the real app built on them (scheduler off)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cockpit.support import LLM_KEY, FixedClock


@pytest.fixture
def llm(llm, monkeypatch):
    """The shared `llm` (tests/conftest.py), with the API key the terminal test hands on."""
    monkeypatch.setenv("ELORA_LLM_API_KEY", LLM_KEY)
    return llm


@pytest.fixture
def clock():
    """The clock every service reads."""
    return FixedClock()


@pytest.fixture
def services(make_services):
    """The services the cockpit is started with (`make_services`, tests/conftest.py, builds a
    second one to play the bot beside the cockpit)."""
    return make_services()


@pytest.fixture
def cockpit(services):
    """Build the real app on the services; periodic refresh is off unless a test asks for it."""
    from cockpit.app import Cockpit

    def build(**options: Any) -> Cockpit:
        options.setdefault("refresh_seconds", None)
        return Cockpit(services, scheduler=False, **options)

    return build
