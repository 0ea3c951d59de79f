"""Learning tests run on real stores with a pinned clock; model paths use a local fake
OpenAI-compatible server whose `fake-lite` queue scripts the LITE model (extraction, over real
HTTP), or an in-process scripted model where the HTTP path is not the point."""

from __future__ import annotations

import pytest

from core.services import Services
from tests.core.learning.support import FixedClock
from tests.fakes import ScriptedModel
from tests.llm_server import model_env


@pytest.fixture
def clock():
    """The pinned clock every service reads."""
    return FixedClock()


@pytest.fixture
def lite(llm_server, home, monkeypatch):
    """The shared fake server (tests/conftest.py), empty, configured as the only (LITE) model;
    no extractor is set, so extraction runs through it."""
    llm_server.reset()
    env = model_env(llm_server.base_url, models={"LITE": "fake-lite"}, extractor=None)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return llm_server


@pytest.fixture
def model_services(lite, embedder, clock):
    """Real services whose LITE model is the fake server (extraction runs through it)."""
    from core.config import load_settings

    svc = Services(load_settings(), embedder=embedder, clock=clock)
    yield svc
    svc.close()


@pytest.fixture
def scripted(home, monkeypatch):
    """An in-process LITE model (tests/fakes.py) where the HTTP path is not the point."""
    monkeypatch.setenv("ELORA_MODEL_LITE", "scripted/lite")  # configured: the model path runs
    return ScriptedModel()


@pytest.fixture
def scripted_services(scripted, embedder, clock):
    """Real services whose model client is the scripted one."""
    from core.config import load_settings

    svc = Services(load_settings(), embedder=embedder, clock=clock, llm=scripted)
    yield svc
    svc.close()
