"""The daily spending cap: PRO stops first (at a share of the cap), then every call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import SpendingCapReached

if TYPE_CHECKING:
    from core.services import Services


class SpendGuard:
    """Checks today's known spend (plus the running request's) against the configured cap."""

    def __init__(self, services: Services):
        self.services = services
        self.settings = services.settings

    def spent_today(self) -> float:
        """Known spend since midnight UTC."""
        return self.services.traces.spent_today()

    def check(self, tier: str, running: float = 0.0) -> None:
        """Raise SpendingCapReached if a call at this tier is not allowed any more today."""
        cap = self.settings.daily_spend_cap
        if cap is None:
            return
        spent = self.spent_today() + running
        if spent >= cap:
            raise SpendingCapReached(
                f"today's spending cap of ${cap:g} is reached (${spent:.4f} spent); "
                "no more model calls until midnight UTC, or raise ELORA_DAILY_SPEND_CAP"
            )
        if tier == "PRO" and spent >= cap * self.settings.pro_spend_share:
            raise SpendingCapReached(
                f"PRO is paused: ${spent:.4f} of today's ${cap:g} cap is spent "
                f"(PRO stops at {self.settings.pro_spend_share:.0%})"
            )

    def allows(self, tier: str, running: float = 0.0) -> bool:
        """Whether check() would pass."""
        try:
            self.check(tier, running)
        except SpendingCapReached:
            return False
        return True
