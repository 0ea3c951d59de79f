"""The bot's HTTP requests to Telegram: a pass-through `BaseRequest` others build on, and the
one every bot uses, which lends the update's work slot out while Telegram answers."""

from __future__ import annotations

from telegram.request import BaseRequest, HTTPXRequest

from core.offload import waiting_elsewhere

# PTB's own pool size for the bot's (non-getUpdates) requests.
POOL_SIZE = 256


class PassThrough(BaseRequest):
    """Another request, passed through (subclasses add to `do_request`)."""

    def __init__(self, inner: BaseRequest | None = None):
        self.inner = inner or HTTPXRequest(connection_pool_size=POOL_SIZE)

    @property
    def read_timeout(self) -> float | None:
        """The wrapped request's read timeout."""
        return self.inner.read_timeout

    async def initialize(self) -> None:
        """Initialise the wrapped request."""
        await self.inner.initialize()

    async def shutdown(self) -> None:
        """Shut the wrapped request down."""
        await self.inner.shutdown()

    async def do_request(self, url: str, method: str, request_data=None, **timeouts):
        """The wrapped request's answer."""
        return await self.inner.do_request(url, method, request_data, **timeouts)


class LendsWorkSlot(PassThrough):
    """Waiting for Telegram (sending a reply, "typing…") uses no core: the update's work slot
    (core/offload.py) serves another chat meanwhile, as it does while a model answers."""

    async def do_request(self, url: str, method: str, request_data=None, **timeouts):
        """Send, with the work slot lent out until Telegram answers."""
        async with waiting_elsewhere():
            return await self.inner.do_request(url, method, request_data, **timeouts)
