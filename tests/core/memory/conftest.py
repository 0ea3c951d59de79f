"""Memory tests run on real stores with a pinned clock."""

import pytest

from tests.core.memory.helpers import FixedClock


@pytest.fixture
def clock():
    """The pinned clock the services read."""
    return FixedClock()
