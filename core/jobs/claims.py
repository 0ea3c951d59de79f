"""Scheduled runs happen once across processes: each run is claimed in `job_claims` first.

Every process with a scheduler (each bot worker, the cockpit) fires every job at its own
pace. Before running, it claims the run: the claim succeeds only when the job's last claimed
start is older than most of its interval, and one statement checks and moves it, so of
several processes firing about together exactly one runs the job (PostgreSQL locks the row
for the others, which then see the new start time; SQLite serialises the write turns). A job
run by hand (`elora jobs run NAME`) claims nothing: asking for it means now.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from core.storage.db import statement

if TYPE_CHECKING:
    from core.services import Services

# A run is due once this share of the interval has passed since the last claimed start:
# processes started a little apart must not each find the job due a little early.
DUE_SHARE = 0.9


def claim_run(services: Services, name: str, every_minutes: float, worker: str) -> bool:
    """Whether this process should run job `name` now (and, if so, the run is claimed)."""
    now = services.clock.now()
    due = now - timedelta(minutes=every_minutes * DUE_SHARE)
    params = {"n": name, "now": now, "due": due, "w": worker}
    with services.db.session(write=True) as session:
        conn = session.connection()
        first = conn.execute(
            statement(
                "INSERT INTO job_claims (name, started_at, worker) VALUES (:n, :now, :w) "
                "ON CONFLICT DO NOTHING",
                params,
            )
        ).rowcount
        if first:
            return True
        return bool(
            conn.execute(
                statement(
                    "UPDATE job_claims SET started_at = :now, worker = :w "
                    "WHERE name = :n AND started_at <= :due",
                    params,
                )
            ).rowcount
        )


def last_claims(services: Services) -> dict[str, tuple[str, str]]:
    """Each job's last claimed start and the process that claimed it."""
    with services.db.session() as session:
        rows = session.connection().exec_driver_sql(
            "SELECT name, started_at, worker FROM job_claims"
        )
        return {name: (str(started), worker) for name, started, worker in rows}
