"""A background event loop for core's async calls, so the UI thread never waits on a model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


class BackgroundLoop:
    """One long-lived loop in a daemon thread (LiteLLM's async clients stay bound to it)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="elora-core", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the background loop and wait for it (call from a worker thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        """Stop the loop."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
