"""Opening a home for a surface, and its background jobs."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.services import Services


def open_services(**overrides: Any) -> Services:
    """Load settings (ConfigError on a bad one), start a new home, log to stderr with every
    secret redacted, and build the services a surface is handed."""
    from core.logs import setup_logging
    from core.services import open_services as build

    services = build(**overrides)
    setup_logging(services.settings.log_level, services.settings.secrets())
    return services


def warm_up(services: Services) -> None:
    """Load what the first request would otherwise wait for (the model client library, the
    embedding model, the vector store); long-running surfaces call it at start.

    What is loaded by then lives as long as the process: it is frozen out of the garbage
    collector's reach. Each full pass of the collector walked every object of those libraries
    (0.1-0.7 s of a bot's event loop, growing with them); it now walks what requests made."""
    services.warm_up()
    gc.freeze()


def finish_indexing(services: Services, timeout: float) -> None:
    """Wait (at most `timeout` seconds) for the last messages' chunks to be embedded; what is
    left stays pending for the index job."""
    services.archive.indexer.wait_idle(timeout)


def start_scheduler(services: Services):
    """Start the scheduled jobs on the running event loop; the caller shuts it down."""
    from core.jobs.scheduler import start_scheduler as start

    return start(services)
