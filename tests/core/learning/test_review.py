"""Reviewing proposals through the API and `elora proposals`: list, approve (optionally edited),
reject, restore, bulk-approve; approval canonicalises and writes through the memory API;
the `auto` policy applies recommended proposals itself."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from core.cli.main import main
from core.config import load_settings
from core.errors import InvalidInput, NotFound
from core.learning import review
from core.learning.candidates import Candidate
from core.memory.api import search_memory
from core.services import Services
from tests.core.learning.support import NOW, capture, proposals


async def propose(services, text: str, kind: str = "fact", *, source: str | None = None, **fields):
    """A heuristic candidate filed as a proposal, sourced to an archived message."""
    capture_id = source or capture(services, text)
    candidate = Candidate(text=text, kind=kind, authority="heuristic", confidence=0.7,
                          source_capture_ids=[capture_id], **fields)  # fmt: skip
    return await services.learner.submit(candidate)


def cli_json(capsys, *args: str):
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


async def test_elora_proposals_lists_open_proposals_and_filters_by_status(services, capsys):
    open_one = await propose(services, "Camille works at Lumen Logistics")
    closed = await propose(services, "Camille's sister Léa lives in Bordeaux")
    review.reject(services, closed.id, note="not about me")

    assert [p["id"] for p in cli_json(capsys, "proposals")] == [open_one.id]
    assert [p["id"] for p in cli_json(capsys, "proposals", "--status", "rejected")] == [closed.id]
    assert {p["id"] for p in cli_json(capsys, "proposals", "--status", "all")} == {
        open_one.id,
        closed.id,
    }
    assert main(["proposals"]) == 0  # the table renders too
    assert open_one.id[:8] in capsys.readouterr().out


async def test_approving_canonicalises_the_proposal_into_a_strict_entry(services, capsys):
    source = capture(services, "On a signé avec Nordhaven, le contrat court sur deux ans.",
                     chat_id="77", sender="Camille")  # fmt: skip
    proposal = await propose(services, "Camille's team signed a two-year contract with Nordhaven",
                             "event", source=source, topics=["Nordhaven", "contract"],
                             temporality="dated")  # fmt: skip

    assert main(["proposals", "approve", proposal.id[:8]]) == 0

    assert "approved →" in capsys.readouterr().out
    [approved] = proposals(services, "approved")
    entry = services.memory.require(approved.memory_id)
    assert entry.canonical_text == proposal.text
    assert entry.embedding_text.startswith(proposal.text) and "nordhaven" in entry.embedding_text
    assert (entry.tier, entry.kind, entry.truth_mode) == ("episodic", "event", "observed")
    assert entry.scope == "global" and entry.confidence == 0.7 and entry.observations == 1
    assert entry.topics == ["nordhaven", "contract"]
    assert entry.attributes["temporality"] == "dated"
    assert entry.attributes["proposal_id"] == proposal.id
    assert entry.valid_from == NOW  # an event is dated by its source message
    [provenance] = entry.sources
    assert datetime.fromisoformat(provenance.pop("date")) == NOW
    assert provenance == {"capture_id": source, "surface": "telegram", "chat_id": "77",
                          "message_id": source, "speaker": "Camille"}  # fmt: skip
    assert [h["memory_id"] for h in search_memory(services, "contrat Nordhaven")][:1] == [
        entry.memory_id
    ]


async def test_approving_with_an_edit_writes_the_operators_wording(services, capsys):
    proposal = await propose(services, "Camille likes tea", "preference")

    code = main(
        ["proposals", "approve", proposal.id, "--edit", "Camille drinks genmaicha, no sugar"]
    )

    assert code == 0
    done = services.proposals.get(proposal.id)
    assert done.status == "approved" and done.decision_note == "edited"
    assert done.text == "Camille drinks genmaicha, no sugar"
    entry = services.memory.require(done.memory_id)
    assert entry.canonical_text == "Camille drinks genmaicha, no sugar"
    assert entry.tier == "personalized"


async def test_reject_then_restore_brings_a_proposal_back_to_the_queue(services, capsys):
    proposal = await propose(services, "Camille works at Lumen Logistics")
    status = proposal.status

    assert main(["proposals", "reject", proposal.id, "--note", "old job"]) == 0
    rejected = services.proposals.get(proposal.id)
    assert rejected.status == "rejected" and rejected.decision_note == "old job"
    assert main(["proposals", "approve", proposal.id]) == 1  # not open any more
    assert "rejected" in capsys.readouterr().err

    assert main(["proposals", "restore", proposal.id]) == 0

    restored = services.proposals.get(proposal.id)
    assert restored.status == status and restored.decided_at is None
    assert services.memory.count() == 0


async def test_an_admission_rejected_proposal_can_be_restored_and_approved(services):
    old = capture(services, "peut-être", NOW.replace(year=2021))
    weak = await services.learner.submit(
        Candidate(text="Camille might enjoy jazz", kind="hypothesis", confidence=0.2,
                  importance=1, temporality="expiring", source_capture_ids=[old])
    )  # fmt: skip
    assert weak.status == "rejected"

    restored = review.restore(services, weak.id)
    entry = review.approve(services, weak.id)

    assert restored.status == "pending"
    assert entry.truth_mode == "hypothesis"


async def test_bulk_approval_applies_only_recommended_proposals(services, capsys):
    strong = [
        await propose(services, text, "constraint", importance=4)
        for text in ("Camille is allergic to penicillin", "Never book Camille on Ryanair")
    ]
    middling = await propose(services, "Camille went to the dentist", "event")
    assert {p.status for p in strong} == {"recommended"} and middling.status == "pending"

    assert main(["proposals", "approve", "--recommended"]) == 0

    assert "approved 2" in capsys.readouterr().out
    assert {p.id for p in proposals(services, "approved")} == {p.id for p in strong}
    assert services.proposals.get(middling.id).status == "pending"
    assert services.memory.count() == 2


def test_approve_needs_an_id_or_recommended(home, capsys):
    assert main(["proposals", "approve"]) == 2
    assert main(["proposals", "approve", "feedbeef99"]) == 1
    assert "no proposal" in capsys.readouterr().err


async def test_review_errors_are_clear(services):
    proposal = await propose(services, "Camille works at Lumen Logistics")

    with pytest.raises(InvalidInput, match="empty"):
        review.approve(services, proposal.id, edit="   ")
    with pytest.raises(InvalidInput, match="not rejected"):
        review.restore(services, proposal.id)
    with pytest.raises(NotFound):
        review.reject(services, "nope")


async def test_the_review_policy_leaves_recommended_proposals_waiting(services):
    proposal = await propose(services, "Camille is allergic to penicillin", "constraint",
                             importance=4)  # fmt: skip

    assert proposal.status == "recommended"
    assert services.memory.count() == 0


async def test_the_auto_policy_applies_recommended_proposals_and_nothing_else(
    home, embedder, clock, monkeypatch
):
    monkeypatch.setenv("ELORA_LEARNING_POLICY", "auto")
    svc = Services(load_settings(), embedder=embedder, clock=clock)
    try:
        strong = await propose(svc, "Camille is allergic to penicillin", "constraint", importance=4)
        middling = await propose(svc, "Camille went to the dentist", "event")

        assert strong.status == "approved"
        assert svc.memory.require(strong.memory_id).canonical_text == strong.text
        assert middling.status == "pending"
        assert svc.memory.count() == 1
    finally:
        svc.close()
