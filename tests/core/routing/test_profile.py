"""The capability profile (EMA per dimension, staleness) and the gate that picks the start tier."""

import pytest

from core.recall.classifier import classify
from tests.core.routing.support import NOW, ask
from tests.llm_server import Reply, tool

QUESTION = "What is the capital of France?"  # a task, verbal confidence 0.65, starts at LITE


def test_an_absent_dimension_reads_one_half(services):
    assert services.profile.effective("task") == 0.5
    assert services.profile.all() == []


def test_feedback_moves_p_by_an_exponential_moving_average(services):
    alpha = services.settings.profile_alpha  # 0.2

    up = services.profile.record("task", "up")
    down = services.profile.record("task", "down")

    assert up == pytest.approx(0.5 + alpha * (1.0 - 0.5))  # 0.6
    assert down == pytest.approx(up + alpha * (0.0 - up))  # 0.48
    (row,) = services.profile.all()
    assert (row["dimension"], row["samples"], row["stale"]) == ("task", 2, False)
    assert services.profile.effective("chitchat") == 0.5  # other dimensions untouched


def test_a_stale_profile_is_dampened_toward_one_half(services, clock):
    services.profile.update("task", 1.0)
    services.profile.update("task", 1.0)
    fresh = services.profile.effective("task")

    clock.advance(hours=47)
    assert services.profile.effective("task") == pytest.approx(fresh)
    clock.advance(hours=25)  # 72 h: stale
    three_days = services.profile.effective("task")
    clock.advance(days=7)
    ten_days = services.profile.effective("task")

    assert 0.5 < ten_days < three_days < fresh
    assert ten_days == pytest.approx(0.5, abs=0.01)
    assert services.profile.all()[0]["stale"] is True


def test_the_gate_mixes_verbal_confidence_with_the_profile(services):
    classification = classify(QUESTION, NOW)
    lam = services.settings.gate_lambda

    gate = services.profile.gate(classification)

    assert gate.c == pytest.approx(lam * 0.65 + (1 - lam) * 0.5)
    assert (gate.tier, gate.raised) == ("LITE", False)


def test_a_weak_profile_makes_the_gate_start_one_tier_higher(services, clock):
    classification = classify(QUESTION, NOW)
    services.profile.record("task", "down")  # p = 0.4 → c = 0.525 < θ = 0.55

    gate = services.profile.gate(classification)

    assert gate.c < services.settings.gate_theta
    assert (gate.tier, gate.raised) == ("FLASH", True)
    clock.advance(days=20)  # a long-stale weak profile no longer holds requests up
    assert services.profile.gate(classification).tier == "LITE"


def test_pro_cannot_be_raised(services):
    classification = classify("Design an architecture and strategy for our budget algorithm", NOW)
    services.profile.record(classification.intent, "down")
    services.profile.record(classification.intent, "down")

    gate = services.profile.gate(classification)

    assert (gate.tier, gate.raised) == ("PRO", False)


async def test_a_needed_escalation_teaches_the_gate_to_start_higher(services, llm):
    plan = "## Goal\nAnswer a question LITE found hard."
    llm.enqueue(
        "fake-lite",
        Reply(tool_calls=[tool("new_cognitive_level", target_model="FLASH", transfer_plan=plan)]),
    )
    llm.enqueue("fake-flash", "Paris.", "Rome.")

    first = await ask(services, QUESTION)
    second = await ask(services, "What is the capital of Italy?")

    assert first.route.escalations and first.start_tier == "LITE"
    (row,) = services.profile.all()
    assert (row["dimension"], row["p"]) == ("task", 0.4)  # negative feedback r = 0
    assert second.start_tier == "FLASH" and second.gate["raised"] is True
    assert second.text == "Rome."
    assert len(llm.requests_for("fake-lite")) == 1  # only the first question reached LITE


async def test_an_answer_without_escalation_leaves_the_profile_alone(services, llm):
    llm.enqueue("fake-lite", "Paris.")

    await ask(services, QUESTION)

    assert services.profile.all() == []
