"""Undo tests run on real stores with a pinned clock that a test can move past the period."""

import pytest

from tests.core.learning.support import FixedClock


@pytest.fixture
def clock():
    """The pinned clock every service reads."""
    return FixedClock()
