"""A background event loop for core's async calls, so the UI thread never waits on a model."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundLoop:
    """One long-lived loop in a daemon thread (LiteLLM's async clients stay bound to it)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="elora-core", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the background loop and wait for it (call from a worker thread);
        raises concurrent.futures.CancelledError if the loop is closed first."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self, timeout: float = 5.0) -> None:
        """Cancel whatever still runs, then stop the loop.

        A worker thread waiting in `run` would otherwise wait forever once the loop stops, and
        the process could not exit (the UI's executor joins its threads at shutdown).
        """
        if not self.loop.is_running():
            return

        async def cancel_pending() -> None:
            current = asyncio.current_task()
            pending = [task for task in asyncio.all_tasks() if task is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_pending(), self.loop).result(timeout)
        except TimeoutError:
            log.warning("background work did not stop within %.0f s", timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)
