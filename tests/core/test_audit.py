"""`elora audit`: the per-tier scorecard, with exact figures on a known memory."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.audit import audit
from core.cli.main import main
from core.clock import SystemClock
from core.services import Services
from core.storage.db import db_time, run
from tests.core.learning.support import entry

DAY = timedelta(days=1)


def sql(services, statement: str, params: tuple = ()) -> None:
    with services.db.session() as session:
        run(session.connection(), statement, params)


@pytest.fixture
def known(settings, embedder):
    """Five entries in three tiers, six proposals, two profile dimensions; dated from now."""
    svc = Services(settings, embedder=embedder)
    now = SystemClock().now()
    for memory_id, kind, age, status in [
        ("fact.fresh", "fact", 1, "active"),
        ("fact.stale", "fact", 120, "active"),
        ("fact.history", "fact", 200, "superseded"),  # old, but history is never "stale"
        ("rule.broken", "constraint", 10, "active"),
        ("pref.stale", "preference", 95, "active"),
    ]:
        svc.memory.save(entry(memory_id, f"Entry {memory_id}", kind=kind, status=status,
                              last_touched=now - age * DAY))  # fmt: skip
    # Written behind the API's back: a row the strict schema would have refused.
    sql(svc, "UPDATE memory_entries SET topics = '[]' WHERE memory_id = 'rule.broken'")
    for origin, status, age in [
        ("extraction", "pending", 10),
        ("extraction", "recommended", 3),
        ("extraction", "rejected", 1),
        ("promotion", "pending", 2),
        ("promotion", "approved", 5),
        ("promotion", "approved", 9),  # outside the 7-day window
    ]:
        p = svc.proposals.create(text=f"{origin} {status}", kind="fact", tier="semantic",
                                 candidate={}, origin=origin, status=status)  # fmt: skip
        sql(svc, "UPDATE proposals SET created_at = ? WHERE id = ?",
            (db_time(now - age * DAY), p.id))  # fmt: skip
    svc.profile.update("task", 1.0)
    svc.profile.update("chitchat", 0.0)
    sql(svc, "UPDATE capability_profile SET last_updated = ? WHERE dimension = 'task'",
        (db_time(now - 3 * DAY),))  # fmt: skip
    yield svc
    svc.close()


EXPECTED_TIERS = {
    "semantic": {"entries": 3, "active": 2, "superseded": 1, "deprecated": 0, "faded": 0, "compliant": 3,
                 "stale": 1, "schema_compliance": 1.0, "staleness": 0.5},
    "episodic": {"entries": 0, "active": 0, "superseded": 0, "deprecated": 0, "faded": 0, "compliant": 0,
                 "stale": 0, "schema_compliance": None, "staleness": None},
    "procedural": {"entries": 1, "active": 1, "superseded": 0, "deprecated": 0, "faded": 0, "compliant": 0,
                   "stale": 0, "schema_compliance": 0.0, "staleness": 0.0},
    "personalized": {"entries": 1, "active": 1, "superseded": 0, "deprecated": 0, "faded": 0,
                     "compliant": 1, "stale": 1, "schema_compliance": 1.0, "staleness": 1.0},
    "environment": {"entries": 0, "active": 0, "superseded": 0, "deprecated": 0, "faded": 0,
                    "compliant": 0, "stale": 0, "schema_compliance": None, "staleness": None},
}  # fmt: skip


def test_the_scorecard_has_exact_figures_per_tier(known):
    report = audit(known)

    assert report["tiers"] == EXPECTED_TIERS
    assert report["empty_tiers"] == ["episodic", "environment"]


def test_the_proposal_queue_promotions_and_profile_are_reported(known):
    report = audit(known)

    assert report["proposals"] == {"pending": 2, "recommended": 1, "rejected": 1, "approved": 2,
                                   "oldest_open_days": 10.0}  # fmt: skip
    assert report["promotion_7d"] == {"proposed": 2, "approved": 1}
    profile = report["capability_profile"]
    assert profile["dimensions"] == 2 and profile["stale"] == ["task"]


def test_elora_audit_json_prints_the_same_scorecard(known, capsys):
    assert main(["audit", "--json"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert report["tiers"] == EXPECTED_TIERS
    assert report["proposals"]["oldest_open_days"] == 10.0
    assert report["promotion_7d"] == {"proposed": 2, "approved": 1}


def test_elora_audit_prints_a_readable_table(known, capsys):
    assert main(["audit"]) == 0

    out = capsys.readouterr().out
    assert "semantic" in out and "personalized" in out
    assert "0%" in out  # the procedural tier's schema compliance
    assert "2 pending, 1 recommended, 1 rejected (oldest open: 10.0 days)" in out
    assert "empty tiers: episodic, environment" in out
    assert "capability profile: stale: task" in out


def test_an_empty_home_audits_as_all_empty(services):
    report = audit(services)

    assert report["empty_tiers"] == list(EXPECTED_TIERS)
    assert report["proposals"]["oldest_open_days"] is None
    assert report["promotion_7d"] == {"proposed": 0, "approved": 0}
    assert report["capability_profile"]["dimensions"] == 0
