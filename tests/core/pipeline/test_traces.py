"""Every request leaves a trace: what was recalled, which models ran, what it cost; no secrets."""

import json

import pytest

from core.memory.api import remember
from tests.core.routing.support import ask
from tests.llm_server import Reply, tool

SECRET = "sk-elora-7f3a9c1e55"


async def test_the_trace_records_the_whole_route(make_services, llm):
    services = make_services(MODEL_LITE="openai/gpt-4o-mini")
    entry = remember(services, "The cottage wifi password is blue-heron-42.")
    plan = "## Goal\nCheck the cottage wifi details.\n## Known\nThe password is in memory."
    llm.enqueue(
        "gpt-4o-mini",
        Reply(tool_calls=[tool("search_memory", query="cottage wifi")]),
        Reply(tool_calls=[tool("new_cognitive_level", target_model="FLASH", transfer_plan=plan)]),
    )
    llm.enqueue("fake-flash", Reply(text="blue-heron-42", prompt_tokens=400, completion_tokens=5))

    reply = await ask(services, "What is the cottage wifi password?")
    trace = services.traces.get(reply.trace_id)

    assert trace.capture_id == reply.capture_id and trace.error is None
    assert trace.classification["intent"] == "task"
    assert trace.classification["start_tier"] == "LITE"
    assert entry.memory_id in trace.pack["items"]
    assert trace.pack["start_tier"] == "LITE" and trace.pack["gate"]["tier"] == "LITE"
    assert [(c["tier"], c["model"]) for c in trace.models] == [
        ("LITE", "openai/gpt-4o-mini"),
        ("LITE", "openai/gpt-4o-mini"),
        ("FLASH", "openai/fake-flash"),
    ]
    assert trace.escalations == [{"from": "LITE", "to": "FLASH", "plan_chars": len(plan)}]
    assert [(t["name"], t["ok"]) for t in trace.tool_calls] == [
        ("search_memory", True),
        ("new_cognitive_level", True),
    ]
    assert (trace.tokens_in, trace.tokens_out) == (50 + 50 + 400, 10 + 10 + 5)
    # Two priced LITE calls are counted; the unknown FLASH model adds nothing it cannot know.
    assert trace.cost == pytest.approx(2 * (50 * 0.15e-6 + 10 * 0.6e-6))
    assert trace.models[2]["cost"] is None
    assert trace.latency_ms >= sum(c["latency_ms"] for c in trace.models)


async def test_the_summary_carries_the_answer_and_its_trace(services, llm):
    llm.enqueue("fake-lite", "Paris.")

    reply = await ask(services, "What is the capital of France?")
    summary = json.loads(json.dumps(reply.summary(), default=str))

    assert summary["text"] == "Paris."
    assert summary["trace_id"] == reply.trace_id
    assert summary["final_tier"] == "LITE"
    assert summary["models"][0]["model"] == "openai/fake-lite"
    assert summary["classification"]["intent"] == "task"


async def test_the_api_key_never_reaches_a_trace(make_services, llm):
    services = make_services(LLM_API_KEY=SECRET, MODEL_LITE_FALLBACKS="openai/fake-lite-2")
    llm.enqueue("fake-lite", Reply(status=401))
    llm.enqueue("fake-lite-2", Reply(status=429))

    # The operator pastes the key: it would reach the pack's "missing" subject and the trace.
    reply = await ask(services, f"Is {SECRET} still a valid key for the provider?")

    assert reply.status == "provider_error"
    assert SECRET not in reply.text
    stored = json.dumps(services.traces.get(reply.trace_id).model_dump(), default=str)
    assert SECRET not in stored
    assert "7f3a9c1e55" not in stored  # nor its body, once the question was split into terms
    assert "[redacted]" in stored  # the key was there to be removed


async def test_a_surface_sends_the_answer_first_and_the_trace_keeps_the_id_it_was_given(
    services, llm
):
    from core import app
    from core.pipeline import Request

    llm.default_text = "Le marché est le samedi."
    request = Request(surface="cli", chat_id="c1", text="C'est quand le marché ?", user_id="op")

    reply = await app.answer(services, request)

    assert reply.text == "Le marché est le samedi." and reply.trace_id
    assert services.traces.get(reply.trace_id) is None  # learning and the trace come after
    await app.after_reply(services, reply)
    await app.after_reply(services, reply)  # once only
    trace = services.traces.get(reply.trace_id)
    assert trace.capture_id == reply.capture_id and reply.learning == trace.learning
    assert len(services.db.rows("SELECT id FROM traces")) == 1
