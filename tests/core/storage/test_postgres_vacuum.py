"""Forgetting on PostgreSQL rewrites the tables without the erased rows, even when another
database of the same server runs a transaction begun before the forget: every new snapshot,
the VACUUM's own included, counts that transaction until it ends, so the forget waits for it
(run with ELORA_TEST_DATABASE_URL; `auto` starts a cluster)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from core.memory.api import forget_memory, save_memory
from tests.core.memory.helpers import entry, files_containing

pytestmark = pytest.mark.postgres

SECRET = "5521-OCELOT"


def _wait_until(predicate, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def _vacuum_waits(services) -> bool:
    """Whether a session of the home's database is asking for older transactions."""
    with services.db.engine.connect() as conn:
        return bool(
            conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND query LIKE '%%pg_current_snapshot%%'"
            ).scalar_one()
        )


def test_a_forget_waits_for_an_older_transaction_of_another_database(
    services, home, pg_url, caplog
):
    save_memory(services, entry("fact.gate", f"Le code du portail est {SECRET}"))
    other = create_engine(pg_url, poolclass=NullPool)  # the server's other database
    conn = other.connect()
    conn.exec_driver_sql("SELECT txid_current()")  # a transaction that has begun writing
    done = threading.Event()

    def forget() -> None:
        try:
            forget_memory(services, "fact.gate")
        finally:
            done.set()

    worker = threading.Thread(target=forget)
    try:
        with caplog.at_level(logging.WARNING, logger="core.storage.postgres"):
            worker.start()
            _wait_until(lambda: _vacuum_waits(services) or done.is_set(), "the forget vacuums")
            assert not done.is_set(), "the forget did not wait for the older transaction"
            conn.commit()
            worker.join(timeout=120)
    finally:
        conn.close()
        other.dispose()
    assert done.is_set()
    assert "long transaction" not in caplog.text
    assert files_containing(home, SECRET) == []
