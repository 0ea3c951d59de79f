"""Helpers shared by command modules: opening services, printing JSON and tables."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# Where print_json writes while a --json command runs (see document_stdout); None: sys.stdout.
_document: TextIO | None = None


def services():
    """Load settings and build the services (ConfigError propagates to main)."""
    from core import app

    return app.open_services()


def print_json(data: Any) -> None:
    """Write JSON to stdout, UTF-8, dates as ISO strings."""
    out = _document or sys.stdout
    json.dump(data, out, ensure_ascii=False, indent=2, default=str)
    out.write("\n")
    out.flush()


@contextmanager
def document_stdout() -> Iterator[None]:
    """Keep stdout for the one JSON document: anything else printed meanwhile goes to stderr.

    Libraries print to stdout on their own (LiteLLM's "Give Feedback" banner, native code
    writing to file descriptor 1), which would break `elora … --json | jq`. While the command
    runs, sys.stdout is sys.stderr and, in a real process, descriptor 1 points at stderr too;
    print_json alone writes to the original stdout.
    """
    global _document
    original = sys.stdout
    original.flush()
    saved_fd = None
    document: TextIO = original
    try:
        if original.fileno() == 1:
            saved_fd = os.dup(1)
            os.dup2(2, 1)
            document = open(saved_fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    except (AttributeError, OSError, ValueError):  # a captured or unusual stdout: no fd to move
        saved_fd, document = None, original
    _document, sys.stdout = document, sys.stderr
    try:
        yield
    finally:
        document.flush()
        sys.stderr.flush()
        _document, sys.stdout = None, original
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def console(stderr: bool = False):
    """A rich console (imported lazily)."""
    from rich.console import Console

    return Console(stderr=stderr)
