"""Candidate extraction after each exchange: the LITE model's JSON is validated, a bad answer is
a reported failure, explicit statements are approvals, and heuristics work without a model."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.learning.admission import APPLY_THRESHOLD
from tests.core.learning.support import ask, extraction, proposals

# Questions the classifier is sure about, so the LITE queue holds exactly: answer, extraction.
VEGETARIAN = "I've been vegetarian for three years, what could I cook tonight?"


async def test_a_model_extracted_candidate_becomes_a_scored_proposal_tied_to_its_capture(
    model_services, lite
):
    lite.enqueue(
        "fake-lite",
        "Try a chickpea curry.",
        extraction(
            {"text": "Camille has been vegetarian since 2022", "kind": "preference",
             "topics": ["food", "Diet"], "importance": 3, "confidence": 0.9,
             "temporality": "permanent", "messages": [1]}
        ),
    )  # fmt: skip

    reply = await ask(model_services, VEGETARIAN)

    requests = lite.requests_for("fake-lite")
    assert len(requests) == 2
    prompt = requests[1]["messages"][-1]["content"]
    assert "worth remembering" in prompt and VEGETARIAN in prompt and "Try a chickpea" in prompt
    [proposal] = proposals(model_services)
    assert proposal.text == "Camille has been vegetarian since 2022"
    assert (proposal.kind, proposal.tier, proposal.authority) == (
        "preference",
        "personalized",
        "model",
    )
    assert proposal.source_capture_ids == [reply.capture_id]
    assert proposal.candidate["topics"] == ["food", "diet"]
    assert set(proposal.scores) == {
        "future_utility", "factual_confidence", "semantic_novelty", "temporal_recency",
        "content_type_prior", "environment_prediction_improvement",
    }  # fmt: skip
    assert proposal.scores["factual_confidence"] == 0.9
    assert proposal.scores["semantic_novelty"] == 1.0  # memory is empty
    assert proposal.total == pytest.approx(sum(proposal.scores.values()), abs=0.01)
    assert proposal.total >= APPLY_THRESHOLD and proposal.status == "recommended"
    assert model_services.memory.count() == 0  # review policy: nothing written yet
    trace = model_services.traces.get(reply.trace_id)
    assert trace.learning["extractor"] == "model"
    assert trace.learning["proposals"] == [proposal.id] and trace.learning["failure"] is None


async def test_a_candidate_citing_no_known_message_falls_back_to_the_operators_capture(
    model_services, lite
):
    lite.enqueue(
        "fake-lite",
        "Noted.",
        extraction({"text": "Camille cooks vegetarian food", "kind": "fact", "messages": [9]}),
    )

    reply = await ask(model_services, VEGETARIAN)

    [proposal] = proposals(model_services)
    assert proposal.source_capture_ids == [reply.capture_id]


@pytest.mark.parametrize(
    "broken",
    [
        '{"candidates": [{"text": "Camille is vegetarian", "kind": "preference"',  # truncated
        "Camille is vegetarian.",  # prose, no JSON at all
        extraction({"text": "Camille is vegetarian", "kind": "opinion"}),  # not a kind
        extraction({"text": "Camille is vegetarian", "kind": "fact", "confidence": 7}),
        json.dumps({"candidates": ["Camille is vegetarian"]}),  # items are not objects
        json.dumps({"candidates": "Camille is vegetarian"}),
    ],
    ids=["truncated", "prose", "unknown-kind", "confidence-out-of-range", "strings", "string"],
)
async def test_invalid_extraction_output_is_a_reported_failure_never_an_empty_success(
    model_services, lite, broken
):
    lite.enqueue("fake-lite", "Try a chickpea curry.", broken)

    reply = await ask(model_services, VEGETARIAN)

    assert reply.status == "answered" and reply.text == "Try a chickpea curry."
    trace = model_services.traces.get(reply.trace_id)
    assert trace.learning["failure"].startswith("extraction failed")
    assert trace.learning["proposals"] == []
    assert proposals(model_services) == []


async def test_an_empty_candidate_list_is_a_success_with_nothing_to_propose(model_services, lite):
    lite.enqueue("fake-lite", "Try a chickpea curry.", extraction())

    reply = await ask(model_services, VEGETARIAN)

    learning = model_services.traces.get(reply.trace_id).learning
    assert learning["failure"] is None and learning["extractor"] == "model"
    assert proposals(model_services) == []


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Souviens-toi que je suis allergique aux arachides", "constraint"),
        ("Remember that my passport number ends in 4417", "fact"),
        ("Please remember: I prefer window seats on trains", "preference"),
    ],
)
async def test_an_explicit_remember_statement_is_approved_at_once(services, message, kind):
    reply = await ask(services, message)

    [proposal] = proposals(services)
    assert proposal.status == "approved" and proposal.authority == "operator"
    assert proposal.kind == kind
    entry = services.memory.require(proposal.memory_id)
    assert entry.truth_mode == "asserted" and entry.confidence >= 0.9
    assert entry.sources[0]["capture_id"] == reply.capture_id
    assert "remember" not in entry.canonical_text.lower()
    assert "souviens" not in entry.canonical_text.lower()
    assert reply.learning["approved"] == [entry.memory_id]


async def test_an_explicit_statement_is_approved_even_when_the_model_extracts_too(
    model_services, lite
):
    lite.enqueue(
        "fake-lite",
        "Noted.",
        extraction({"text": "Camille's bike lock code is 0712", "kind": "fact", "messages": [1]}),
    )

    reply = await ask(model_services, "Remember that my bike lock code is 0712, ok?")

    assert reply.learning["failure"] is None
    approved = proposals(model_services, "approved")
    assert [p.authority for p in approved] == ["operator"]
    assert model_services.memory.require(approved[0].memory_id).canonical_text.startswith(
        "My bike lock code is 0712"
    )


async def test_an_explicit_statement_survives_a_failed_extraction(model_services, lite):
    lite.enqueue("fake-lite", "Noted.", "not json")

    reply = await ask(model_services, "Souviens-toi que le code du portail est 4B12, d'accord ?")

    assert reply.learning["failure"]
    [proposal] = proposals(model_services)
    assert proposal.status == "approved"
    assert model_services.memory.get(proposal.memory_id) is not None


def test_elora_remember_writes_an_operator_entry_at_once(home, capsys):
    code = main(["remember", "Ma banque est le Crédit Mutuel", "--kind", "fact", "--json"])

    assert code == 0
    saved = json.loads(capsys.readouterr().out)
    assert saved["truth_mode"] == "asserted" and saved["confidence"] >= 0.9
    assert main(["memories", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["memory_id"] for e in listed] == [saved["memory_id"]]
    assert main(["proposals", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # nothing left waiting for review


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("J'ai décidé de passer au vélo pour aller au bureau", "decision"),
        ("I'm allergic to penicillin", "constraint"),
        ("Je préfère qu'on m'écrive plutôt qu'on m'appelle", "preference"),
    ],
)
async def test_without_a_model_the_heuristic_extractor_still_yields_candidates(
    services, message, kind
):
    reply = await ask(services, message)

    assert reply.status == "no_model"
    assert reply.learning["extractor"] == "heuristic"
    [proposal] = proposals(services)
    assert proposal.kind == kind and proposal.authority == "heuristic"
    assert proposal.status in ("pending", "recommended")
    assert proposal.source_capture_ids == [reply.capture_id]
    assert services.memory.count() == 0


async def test_small_talk_and_questions_yield_no_candidates_without_a_model(services):
    for text in ("Merci, bonne soirée !", "What's the weather like in Lyon tomorrow?"):
        await ask(services, text)

    assert proposals(services) == []


async def test_a_greeting_or_thanks_costs_no_extraction_call(model_services, lite):
    lite.enqueue("fake-lite", "Avec plaisir !", "Bonne soirée !", "Noted.", extraction())

    thanks = await ask(model_services, "Merci beaucoup !")
    night = await ask(model_services, "Bonne nuit")
    fact = await ask(model_services, VEGETARIAN)

    for reply in (thanks, night):
        assert reply.learning["skipped"] == "greeting or acknowledgement"
        assert reply.learning["extractor"] == "model"
    assert fact.learning["skipped"] is None
    prompts = [r["messages"][-1]["content"] for r in lite.requests_for("fake-lite")]
    assert len(prompts) == 4  # three answers and one extraction
    assert sum("worth remembering" in p for p in prompts) == 1


async def test_the_extractor_can_be_switched_off(home, embedder, clock, monkeypatch):
    from core.config import load_settings
    from core.services import Services

    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "off")
    svc = Services(load_settings(), embedder=embedder, clock=clock)
    try:
        reply = await ask(svc, "I'm allergic to penicillin")

        assert reply.learning["extractor"] == "off"
        assert proposals(svc) == []
    finally:
        svc.close()
