"""Fixtures for import tests: JSON files in tmp dirs, services that commit in small batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def write_json(tmp_path):
    """Write a JSON value to a file under tmp_path and return its path."""

    def write(name: str, data) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        return path

    return write


@pytest.fixture
def batch_services(home, embedder, monkeypatch):
    """Services whose imports commit every 5 captures, to observe batch boundaries."""
    from core.config import load_settings
    from core.services import Services

    monkeypatch.setenv("ELORA_IMPORT_BATCH_SIZE", "5")
    svc = Services(load_settings(), embedder=embedder)
    yield svc
    svc.close()
