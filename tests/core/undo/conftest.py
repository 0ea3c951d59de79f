"""Undo tests run on real stores with a pinned clock that a test can move past the period."""

import pytest

from core.services import Services
from tests.core.learning.support import FixedClock


@pytest.fixture
def clock():
    """The pinned clock every service reads."""
    return FixedClock()


@pytest.fixture
def services(settings, embedder, clock):
    """Real services (SQLite + Chroma) on the tmp home, no model configured."""
    svc = Services(settings, embedder=embedder, clock=clock)
    yield svc
    svc.close()
