"""Learning tests run on real stores with a pinned clock; model paths use a local fake
OpenAI-compatible server whose `fake-lite` queue scripts the LITE model."""

from __future__ import annotations

import pytest

from core.services import Services
from tests.core.learning.support import FixedClock
from tests.llm_server import FakeLLMServer


@pytest.fixture
def clock():
    """The pinned clock every service reads."""
    return FixedClock()


@pytest.fixture
def services(settings, embedder, clock):
    """Real services with no model configured (the heuristic extractor runs)."""
    svc = Services(settings, embedder=embedder, clock=clock)
    yield svc
    svc.close()


@pytest.fixture(scope="session")
def llm_server():
    """One fake OpenAI-compatible server for the run."""
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def lite(llm_server, home, monkeypatch):
    """The fake server, empty, configured as the only (LITE) model."""
    llm_server.reset()
    monkeypatch.setenv("ELORA_MODEL_LITE", "openai/fake-lite")
    monkeypatch.setenv("ELORA_LLM_API_BASE", llm_server.base_url)
    monkeypatch.setenv("ELORA_LLM_API_KEY", "test-key")
    monkeypatch.setenv("ELORA_LLM_RETRIES", "0")
    return llm_server


@pytest.fixture
def model_services(lite, embedder, clock):
    """Real services whose LITE model is the fake server (extraction runs through it)."""
    from core.config import load_settings

    svc = Services(load_settings(), embedder=embedder, clock=clock)
    yield svc
    svc.close()
