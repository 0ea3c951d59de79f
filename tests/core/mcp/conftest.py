"""MCP tool tests run on real stores with a pinned clock (tokens expire by the clock)."""

from __future__ import annotations

from datetime import datetime

import pytest

from core.services import Services
from tests.fakes import FixedClock

NOW = datetime(2024, 6, 3, 9, 0)


@pytest.fixture
def clock():
    """The pinned clock the services and the confirmation tokens read."""
    return FixedClock(NOW)


@pytest.fixture
def services(settings, embedder, clock):
    """Real services (SQLite + Chroma) on the tmp home, no model (heuristic learning)."""
    svc = Services(settings, embedder=embedder, clock=clock)
    yield svc
    svc.close()
