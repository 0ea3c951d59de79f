"""Time, behind a tiny seam so tests and jobs can pin "now"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Something that tells the current UTC time."""

    def now(self) -> datetime: ...


class SystemClock:
    """The machine's clock, as naive UTC (how SQLite stores datetimes)."""

    def now(self) -> datetime:
        """The current time in UTC, without tzinfo."""
        return datetime.now(UTC).replace(tzinfo=None)


def to_utc_naive(value: datetime) -> datetime:
    """Normalise an aware datetime to naive UTC; naive ones are assumed to be UTC already."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value
