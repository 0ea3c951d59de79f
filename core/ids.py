"""Identifiers: random capture ids, deterministic entry uuids."""

from __future__ import annotations

import uuid

# Fixed namespace so the same memory_id always maps to the same uuid (save = upsert).
MEMORY_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5e7f-9c0d-1e2f3a4b5c6d")


def new_id() -> str:
    """A fresh random id (hex, 32 chars)."""
    return uuid.uuid4().hex


def memory_uuid(memory_id: str) -> str:
    """UUIDv5 of a memory_id in Elora's namespace."""
    return str(uuid.uuid5(MEMORY_NAMESPACE, memory_id))


def chunk_id(capture_id: str, part: int) -> str:
    """The id of a part of a long capture, stable across replays."""
    return uuid.uuid5(MEMORY_NAMESPACE, f"chunk:{capture_id}:{part}").hex
