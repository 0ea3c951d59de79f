"""Where later messages start (core.recall.later_start): the kept answer is never past a message
sent at or after the moment, through new messages, imports of older ones, forgets and rowids
given again; and it is SQLite's own answer while nothing was removed."""

import random
from datetime import datetime, timedelta

import pytest

from core.archive.captures import delete_messages
from core.recall.later_start import first_rowid_since
from core.storage.db import db_time
from tests.core.memory.helpers import message

START = datetime(2024, 1, 1, 9, 0)


def _exact(conn, since: str) -> int | None:
    return conn.exec_driver_sql(
        "SELECT min(rowid) FROM captures WHERE sent_at >= ?", (since,)
    ).scalar()


def _moments(conn) -> list[str]:
    stored = [r[0] for r in conn.exec_driver_sql("SELECT sent_at FROM captures").all()]
    probes = [db_time(START + timedelta(hours=h)) for h in range(-200, 3000, 13)]
    return stored + probes


def _store(services, name: str, hours: list[float]) -> None:
    services.archive.store_batch(
        [
            message(f"{name}{n}", f"note {n}", START + timedelta(hours=h))
            for n, h in enumerate(hours)
        ]
    )


def _check(services, exact: bool) -> int:
    """Compare with SQLite for every stored moment and a grid of others; the count compared."""
    with services.db.session() as session:
        conn = session.connection()
        moments = _moments(conn)
        for since in moments:
            kept, truth = first_rowid_since(conn, since), _exact(conn, since)
            if truth is None:
                assert kept is None or not exact, since
            elif exact:
                assert kept == truth, since
            else:
                assert kept is not None and kept <= truth, since
    return len(moments)


@pytest.mark.sqlite_only
def test_where_later_messages_start_through_new_old_and_forgotten_messages(services):
    rng = random.Random(7)
    _store(services, "a", [rng.uniform(0, 2000) for _ in range(150)])  # dates out of order
    assert _check(services, exact=True) > 300
    _store(services, "b", [rng.uniform(2000, 2500) for _ in range(20)])  # newer than all read
    _store(services, "c", [rng.uniform(-100, 100) for _ in range(20)])  # an import of old ones
    assert _check(services, exact=True)
    with services.db.session(write=True) as session:  # a forget of messages in the middle
        conn = session.connection()
        rows = conn.exec_driver_sql(
            "SELECT rowid, id FROM captures WHERE rowid % 5 = 0 AND rowid < 100"
        ).all()
        delete_messages(conn, [r[0] for r in rows], [r[1] for r in rows])
    assert _check(services, exact=False)  # a bound, never past a message still there


@pytest.mark.sqlite_only
def test_a_rowid_given_again_after_a_forget_is_found(services):
    _store(services, "a", [float(h) for h in range(0, 400, 4)])
    with services.db.session() as session:
        conn = session.connection()
        top = conn.exec_driver_sql("SELECT max(rowid) FROM captures").scalar()
        since = db_time(START + timedelta(hours=395))
        assert first_rowid_since(conn, since) == top  # read and kept
    with services.db.session(write=True) as session:  # the ten newest messages are forgotten
        conn = session.connection()
        rows = conn.exec_driver_sql(
            "SELECT rowid, id FROM captures WHERE rowid > ?", (top - 10,)
        ).all()
        delete_messages(conn, [r[0] for r in rows], [r[1] for r in rows])
    # Ten new ones take the same rowids, sent later than every message: the oldest of them
    # starts what comes after hour 395, below the rowid kept for it.
    _store(services, "b", [float(h) for h in range(500, 510)])
    with services.db.session() as session:
        conn = session.connection()
        assert first_rowid_since(conn, since) == top - 9 == _exact(conn, since)
    assert _check(services, exact=True)
