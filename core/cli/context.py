"""Helpers shared by command modules: opening services, printing JSON and tables."""

from __future__ import annotations

import json
import sys
from typing import Any


def services():
    """Load settings and build the services (ConfigError propagates to main)."""
    from core.logs import setup_logging
    from core.services import open_services

    svc = open_services()
    setup_logging(svc.settings.log_level, svc.settings.secrets())
    return svc


def print_json(data: Any) -> None:
    """Write JSON to stdout, UTF-8, dates as ISO strings."""
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def console(stderr: bool = False):
    """A rich console (imported lazily)."""
    from rich.console import Console

    return Console(stderr=stderr)
