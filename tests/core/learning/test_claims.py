"""A proposal being approved is still open until the decision is written, everywhere it is
counted or listed; a process that dies between the claim and the decision strands nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from core.cli.main import main
from core.clock import SystemClock
from core.errors import InvalidInput
from core.learning import review
from core.learning.proposals import CLAIM_LEASE, being_decided

TEXT = "Camille prefers the window seat on trains"

# A process that claims the proposal for approval, then dies before deciding it (as a crash,
# a kill -9 or a power cut would leave it).
CRASHING_APPROVER = textwrap.dedent(
    """
    import os, sys
    from core.config import load_settings
    from core.learning import review
    from core.services import Services

    services = Services(load_settings())
    review._apply = lambda *args, **kwargs: os._exit(3)  # dies right after the claim
    review.approve(services, sys.argv[1])
    """
)


def _proposal(services, text: str = TEXT, status: str = "pending"):
    return services.proposals.create(
        text=text, kind="preference", tier="personalized", status=status, total=4.5,
        candidate={"text": text, "kind": "preference", "tier": "personalized", "scope": "global",
                   "topics": ["travel"], "importance": 2, "confidence": 0.8},
    )  # fmt: skip


def _crash_while_approving(home, proposal_id: str) -> None:
    env = {**os.environ, "ELORA_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", CRASHING_APPROVER, proposal_id], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 3, done.stderr


def test_a_claim_abandoned_by_a_crash_leaves_the_proposal_open_then_free(
    services, clock, home, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")  # the listing's table on one line per row
    proposal = _proposal(services)

    _crash_while_approving(home, proposal.id)
    clock.moment = SystemClock().now()  # the crashed process claimed it at real time

    # Still open, and counted and listed as such everywhere, marked as being approved.
    stored = services.proposals.get(proposal.id)
    assert stored.status == "pending" and being_decided(stored, clock.now())
    assert services.proposals.count() == 1
    assert [p.id for p in services.proposals.list()] == [proposal.id]
    assert main(["proposals"]) == 0
    assert "pending (approving…)" in capsys.readouterr().out
    assert main(["doctor", "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["counts"]["proposals_pending"] == 1
    assert services.memory.count() == 0
    # Within the lease another surface may not decide it (the claim may still be alive)...
    with pytest.raises(InvalidInput, match="being decided elsewhere"):
        review.approve(services, proposal.id)
    with pytest.raises(InvalidInput, match="being decided elsewhere"):
        review.reject(services, proposal.id)

    # ...after it, the dead claim no longer holds: the proposal is plainly open again.
    clock.advance(seconds=CLAIM_LEASE.total_seconds() + 1)
    assert not being_decided(services.proposals.get(proposal.id), clock.now())
    entry = review.approve(services, proposal.id)

    decided = services.proposals.get(proposal.id)
    assert (decided.status, decided.memory_id, decided.claimed_at) == (
        "approved", entry.memory_id, None,
    )  # fmt: skip
    assert services.proposals.count() == 0


def test_a_failed_approval_releases_its_claim_at_once(services, monkeypatch):
    proposal = _proposal(services, status="recommended")

    def failing_save(*_args, **_kwargs):
        raise InvalidInput("invalid memory entry: topics: at least one topic is required")

    monkeypatch.setattr(services.memory, "save", failing_save)
    with pytest.raises(InvalidInput):
        review.approve(services, proposal.id)
    monkeypatch.undo()

    stored = services.proposals.get(proposal.id)
    assert (stored.status, stored.claimed_at) == ("recommended", None)
    assert review.approve(services, proposal.id).canonical_text == TEXT


def test_approve_all_recommended_leaves_one_being_approved_elsewhere(services, home, clock):
    busy = _proposal(services, status="recommended")
    free = _proposal(services, "Marc takes his coffee black", status="recommended")
    _crash_while_approving(home, busy.id)
    clock.moment = SystemClock().now()

    entries = review.approve_recommended(services)

    assert [e.canonical_text for e in entries] == ["Marc takes his coffee black"]
    assert services.proposals.get(free.id).status == "approved"
    assert services.proposals.get(busy.id).status == "recommended"


def test_a_proposal_stranded_as_approving_by_an_older_release_is_open_again(home, settings):
    from core.storage.db import Database
    from core.storage.migrations import MIGRATIONS

    path = settings.home / "stranded.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Database(f"sqlite:///{path}")
    with db.session():  # every migration
        pass
    db.close()
    # Back to the schema before this fix, with a proposal its crash left as 'approving'.
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE proposals DROP COLUMN claimed_at")
        con.execute("DELETE FROM schema_migrations WHERE version = 12")
        con.execute(
            "INSERT INTO proposals (id, status, tier, kind, text, created_at) "
            "VALUES ('p-stuck', 'approving', 'personalized', 'preference', ?, "
            "'2025-04-16 12:00:00')",
            (TEXT,),
        )
    assert 12 in {v for v, _, _ in MIGRATIONS}

    db = Database(f"sqlite:///{path}")
    with db.session():  # the upgrade
        pass
    db.close()

    with sqlite3.connect(path) as con:
        assert con.execute("SELECT status, claimed_at FROM proposals").fetchall() == [
            ("pending", None)
        ]
