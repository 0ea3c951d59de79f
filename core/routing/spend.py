"""The daily spending cap: PRO stops first (at a share of the cap), then every call."""

from __future__ import annotations

from collections.abc import Callable

from core.errors import SpendingCapReached


class SpendGuard:
    """Checks today's known spend (plus the running request's) against the configured cap."""

    def __init__(self, spent_today: Callable[[], float], cap: float | None, pro_share: float):
        self._spent_today = spent_today  # the traces' count, since midnight UTC
        self.cap = cap  # ELORA_DAILY_SPEND_CAP (None: no cap)
        self.pro_share = pro_share  # PRO stops at this share of the cap

    def spent_today(self) -> float:
        """Known spend since midnight UTC."""
        return self._spent_today()

    def check(self, tier: str, running: float = 0.0) -> None:
        """Raise SpendingCapReached if a call at this tier is not allowed any more today."""
        cap = self.cap
        if cap is None:
            return
        spent = self.spent_today() + running
        if spent >= cap:
            raise SpendingCapReached(
                f"today's spending cap of ${cap:g} is reached (${spent:.4f} spent); "
                "no more model calls until midnight UTC, or raise ELORA_DAILY_SPEND_CAP"
            )
        if tier == "PRO" and spent >= cap * self.pro_share:
            raise SpendingCapReached(
                f"PRO is paused: ${spent:.4f} of today's ${cap:g} cap is spent "
                f"(PRO stops at {self.pro_share:.0%})"
            )

    def allows(self, tier: str, running: float = 0.0) -> bool:
        """Whether check() would pass."""
        try:
            self.check(tier, running)
        except SpendingCapReached:
            return False
        return True
