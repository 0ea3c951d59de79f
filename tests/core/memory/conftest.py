"""Memory tests run on real stores with a pinned clock."""

import pytest

from core.services import Services
from tests.core.memory.helpers import FixedClock


@pytest.fixture
def clock():
    """The pinned clock the services read."""
    return FixedClock()


@pytest.fixture
def services(settings, embedder, clock):
    """Real services (SQLite + Chroma) on the tmp home, with the pinned clock."""
    svc = Services(settings, embedder=embedder, clock=clock)
    yield svc
    svc.close()
