"""The durable update queue several bot workers share (table `updates`, migration 17).

Whoever receives an update (the polling leader, or any worker behind a webhook) stores it
here before Telegram is told it arrived, so a crash loses nothing. Any worker then claims
work one chat at a time: the oldest unfinished update of a chat whose oldest update nobody
holds, leased for a while (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two workers never
wait for, nor take, the same row). A chat's next update becomes claimable only once the one
before it is done, so each chat's messages are handled in order, whichever worker takes
them. A worker renews its leases while it works; when one dies, its leases run out and
another worker claims the same update again. Replaying is safe: the capture of a message is
keyed by the message, and an update whose reply already went out (`replied_at`) is closed
without being run again.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from core.storage.db import statement

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

# A claim whose update was already claimed this many times is given up (marked failed):
# an update that kills every worker that takes it must not take the fleet down with it.
MAX_ATTEMPTS = 5
OPEN = ("pending", "working")


def worker_name() -> str:
    """A name for this process among the workers: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class Claimed:
    """An update a worker holds: its id, its chat, the update as Telegram sent it."""

    update_id: int
    chat_key: str
    payload: dict[str, Any]
    attempts: int


class UpdateQueue:
    """Receive, claim, renew, mark replied, complete: the queue's whole life cycle.

    Leases are reckoned by the database server's clock on PostgreSQL (workers on several
    hosts agree on it), by this process's clock on SQLite."""

    def __init__(self, services: Services, surface: str = "telegram", worker: str | None = None):
        self.services = services
        self.surface = surface
        self.worker = worker or worker_name()
        self.lease_seconds = float(services.settings.worker_lease_seconds)

    @property
    def _postgres(self) -> bool:
        return self.services.db.dialect == "postgresql"

    def _times(self) -> tuple[str, str, dict[str, Any]]:
        """SQL for now and for the end of a new lease, and their parameters."""
        if self._postgres:
            return (
                "LOCALTIMESTAMP",
                "LOCALTIMESTAMP + make_interval(secs => :lease)",
                {"lease": self.lease_seconds},
            )
        now = self.services.clock.now()
        return ":now", ":until", {"now": now, "until": now + timedelta(seconds=self.lease_seconds)}

    def _run(self, conn: Connection, sql: str, **params: Any):
        return conn.execute(statement(sql, {"s": self.surface, "w": self.worker, **params}))

    def receive(self, update_id: int, chat_key: str, payload: dict[str, Any]) -> bool:
        """Store a received update (once: a redelivery is ignored); whether it was new."""
        with self.services.db.session() as session:
            conn = session.connection()
            added = self._run(
                conn,
                "INSERT INTO updates (surface, update_id, chat_key, payload, received_at) "
                "VALUES (:s, :u, :c, :p, :t) ON CONFLICT DO NOTHING",
                u=int(update_id), c=chat_key, p=json.dumps(payload), t=self.services.clock.now(),
            ).rowcount  # fmt: skip
            if added:
                self._notify(conn)
        return bool(added)

    def claim(self) -> Claimed | None:
        """Lease the next update some chat is waiting on, or None when there is none."""
        while True:
            # SQLite has no row locks: its write turn (BEGIN IMMEDIATE) serialises claims.
            with self.services.db.session(write=not self._postgres) as session:
                claimed = self._claim(session.connection())
            if claimed is None or claimed.attempts <= MAX_ATTEMPTS:
                return claimed
            log.error(
                "update %s was claimed %d times without finishing; given up",
                claimed.update_id, claimed.attempts,
            )  # fmt: skip
            self._finish(claimed.update_id, "failed")

    def _claim(self, conn: Connection) -> Claimed | None:
        now, until, times = self._times()
        lock = " FOR UPDATE SKIP LOCKED" if self._postgres else ""
        while True:
            # The oldest open update of each chat, unless a live lease holds it (then the chat
            # is busy: its later updates wait their turn).
            row = self._run(
                conn,
                "SELECT u.update_id, u.chat_key, u.payload, u.attempts, u.replied_at "
                "FROM updates u WHERE u.surface = :s AND u.state IN ('pending', 'working') "
                f"AND (u.lease_until IS NULL OR u.lease_until < {now}) "
                "AND NOT EXISTS (SELECT 1 FROM updates o WHERE o.surface = u.surface "
                "AND o.chat_key = u.chat_key AND o.state IN ('pending', 'working') "
                f"AND o.update_id < u.update_id) ORDER BY u.update_id LIMIT 1{lock}",
                **times,
            ).first()
            if row is None:
                return None
            update_id, chat_key, payload, attempts, replied_at = row
            if replied_at is None:
                break
            # Its reply went out before its worker stopped: closing it is all that was left.
            self._run(
                conn,
                f"UPDATE updates SET state = 'done', done_at = {now}, lease_until = NULL, "
                "payload = '{}' WHERE surface = :s AND update_id = :u",
                u=update_id, **times,
            )  # fmt: skip
            self._notify(conn)
            log.info("update %s was answered before its worker stopped; closed", update_id)
        self._run(
            conn,
            f"UPDATE updates SET state = 'working', worker = :w, lease_until = {until}, "
            "attempts = attempts + 1 WHERE surface = :s AND update_id = :u",
            u=update_id, **times,
        )  # fmt: skip
        if attempts:
            log.warning("update %s taken over (attempt %d)", update_id, attempts + 1)
        data = json.loads(payload) if isinstance(payload, str) else payload
        return Claimed(int(update_id), chat_key, data, int(attempts) + 1)

    def renew(self) -> int:
        """Extend every lease this worker holds; how many it holds."""
        _, until, times = self._times()
        with self.services.db.session() as session:
            return self._run(
                session.connection(),
                f"UPDATE updates SET lease_until = {until} WHERE surface = :s AND worker = :w "
                "AND state = 'working'",
                **times,
            ).rowcount

    def replied(self, update_id: int) -> None:
        """Record that this update's reply went out (a replay closes it instead of answering)."""
        now, _, times = self._times()
        with self.services.db.session() as session:
            self._run(
                session.connection(),
                f"UPDATE updates SET replied_at = {now} WHERE surface = :s AND update_id = :u "
                "AND replied_at IS NULL",
                u=update_id, **times,
            )  # fmt: skip

    def complete(self, update_id: int) -> bool:
        """Mark an update done; False when this worker no longer held it (its lease ran out
        and another worker took it over)."""
        return self._finish(update_id, "done", only_mine=True)

    def _finish(self, update_id: int, state: str, only_mine: bool = False) -> bool:
        now, _, times = self._times()
        mine = " AND worker = :w" if only_mine else ""
        with self.services.db.session() as session:
            conn = session.connection()
            changed = self._run(
                conn,
                # The payload goes with the work: a message's text stays in the archive only
                # (where forget finds it), not in a queue row kept a week.
                f"UPDATE updates SET state = :state, done_at = {now}, lease_until = NULL, "
                "payload = '{}' "
                f"WHERE surface = :s AND update_id = :u AND state = 'working'{mine}",
                state=state, u=update_id, **times,
            ).rowcount  # fmt: skip
            self._notify(conn)  # the chat's next update may be claimed now
        if not changed and only_mine:
            log.warning("update %s was taken over by another worker before it finished", update_id)
        return bool(changed)

    def backlog(self) -> dict[str, int]:
        """How many updates are pending, being worked on, done and given up."""
        with self.services.db.session() as session:
            rows = self._run(
                session.connection(),
                "SELECT state, count(*) FROM updates WHERE surface = :s GROUP BY state",
            )
            counts = {state: int(n) for state, n in rows}
        return {state: counts.get(state, 0) for state in ("pending", "working", "done", "failed")}

    def prune(self, older_than: timedelta = timedelta(days=7)) -> int:
        """Forget finished updates older than a week (their ids are never redelivered)."""
        with self.services.db.session() as session:
            return self._run(
                session.connection(),
                "DELETE FROM updates WHERE surface = :s AND state IN ('done', 'failed') "
                "AND done_at < :before",
                before=self.services.clock.now() - older_than,
            ).rowcount

    def _notify(self, conn: Connection) -> None:
        """Wake the other workers (delivered when this transaction commits)."""
        if self._postgres:
            conn.execute(text("SELECT pg_notify(:channel, '')"), {"channel": channel(conn)})


def channel(conn: Connection) -> str:
    """The NOTIFY channel of this home's update queue."""
    from core.storage.postgres import connection_key

    return f"elora_updates_{connection_key(conn) & 0xFFFFFFFF:x}"
