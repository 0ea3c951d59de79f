"""Provider trouble: rate limits and slow replies fall back; what survives is an honest message."""

from tests.core.routing.support import ask, captures
from tests.llm_server import Reply

QUESTION = "What is the capital of France?"


async def test_a_rate_limited_model_falls_back_to_the_next_one(make_services, llm):
    services = make_services(MODEL_LITE_FALLBACKS="openai/fake-lite-2")
    llm.enqueue("fake-lite", Reply(status=429))
    llm.enqueue("fake-lite-2", "Paris, from the fallback.")

    reply = await ask(services, QUESTION)

    assert (reply.status, reply.text) == ("answered", "Paris, from the fallback.")
    assert len(llm.requests_for("fake-lite")) == 1  # no hidden retries of a rate limit
    (call,) = services.traces.get(reply.trace_id).models
    assert call["model"] == "openai/fake-lite-2"
    assert call["attempts"] == [
        {"model": "openai/fake-lite", "error": "RateLimitError 429"},
        {"model": "openai/fake-lite-2", "ok": True},
    ]


async def test_when_every_fallback_fails_the_reply_is_short_and_honest(make_services, llm):
    services = make_services(MODEL_LITE_FALLBACKS="openai/fake-lite-2")
    llm.enqueue("fake-lite", Reply(status=429))
    llm.enqueue("fake-lite-2", Reply(status=503))

    reply = await ask(services, QUESTION)

    assert reply.status == "provider_error"
    assert "can't reach my language model" in reply.text
    assert "saved" in reply.text
    assert "fake-lite" not in reply.text  # provider details stay in the logs and the trace
    assert len(reply.text) < 200
    # The operator's message is archived all the same, and the trace says what happened.
    assert captures(services) == 1
    assert services.traces.get(reply.trace_id).error == "provider_error"


async def test_a_slow_model_times_out_and_falls_back(make_services, llm):
    services = make_services(LLM_TIMEOUT_SECONDS="1", MODEL_LITE_FALLBACKS="openai/fake-lite-2")
    llm.enqueue("fake-lite", Reply(text="too late", delay=4.0))
    llm.enqueue("fake-lite-2", "Paris, in time.")

    reply = await ask(services, QUESTION)

    assert reply.text == "Paris, in time."
    (call,) = reply.route.calls
    assert call["attempts"][0]["model"] == "openai/fake-lite"
    assert "Timeout" in call["attempts"][0]["error"]
    assert call["latency_ms"] < 4000  # nobody waited for the slow reply


async def test_a_server_error_is_retried_once_when_retries_are_configured(make_services, llm):
    services = make_services(LLM_RETRIES="1")
    llm.enqueue("fake-lite", Reply(status=500), "Paris, second try.")

    reply = await ask(services, QUESTION)

    assert reply.text == "Paris, second try."
    assert len(llm.requests_for("fake-lite")) == 2
    assert [a.get("ok", False) for a in reply.route.calls[0]["attempts"]] == [False, True]


async def test_a_failure_after_an_escalation_keeps_the_calls_already_made(make_services, llm):
    services = make_services(MODEL_LITE="openai/gpt-4o-mini")
    plan = "## Goal\nA careful comparison of both offers."
    llm.enqueue(
        "gpt-4o-mini",
        Reply(tool_calls=[{"name": "new_cognitive_level",
                           "arguments": {"target_model": "FLASH", "transfer_plan": plan}}]),
    )  # fmt: skip
    llm.enqueue("fake-flash", Reply(status=503))

    reply = await ask(services, "Which of my two mortgage offers is cheaper?")

    assert reply.status == "provider_error"
    trace = services.traces.get(reply.trace_id)
    # The LITE call was made and paid for: it stays in the trace and in today's spend.
    assert [c["model"] for c in trace.models] == ["openai/gpt-4o-mini"]
    assert trace.cost and trace.cost > 0
    assert services.spend.spent_today() == trace.cost


async def test_a_failing_classifier_model_leaves_the_decision_to_the_heuristics(services, llm):
    llm.enqueue("fake-lite", Reply(status=429))
    llm.enqueue("fake-flash", "Noted.")

    reply = await ask(services, "gym stuff tomorrow maybe")  # unsure: LITE is asked to classify

    assert (reply.status, reply.text) == ("answered", "Noted.")
    assert reply.classification.source == "heuristic"
    assert any("classifier unavailable" in r for r in reply.classification.reasons)
    assert len(llm.requests_for("fake-lite")) == 1
    # The heuristics' low confidence (0.45) makes the gate start one tier higher.
    assert (reply.start_tier, reply.gate["raised"]) == ("FLASH", True)
