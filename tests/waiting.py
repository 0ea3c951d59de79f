"""Waiting for a state another thread or process brings about (never for a fixed time)."""

import time


def wait_until(predicate, what: str, timeout: float = 60.0, pause: float = 0.05) -> None:
    """Poll until `predicate()` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(pause)
