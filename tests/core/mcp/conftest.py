"""MCP tool tests run on real stores with a pinned clock (tokens expire by the clock)."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.fakes import FixedClock

NOW = datetime(2024, 6, 3, 9, 0)


@pytest.fixture
def clock():
    """The pinned clock the services and the confirmation tokens read."""
    return FixedClock(NOW)
