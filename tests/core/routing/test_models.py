"""Model configuration: three tiers, borrowing when one is unset, and life with no model at all."""

from core.memory.api import remember, search_memory
from core.recall.pack import build_pack
from core.routing.tiers import resolve
from tests.core.routing.support import ask, captures, tool_names


async def test_a_clear_question_is_answered_by_lite_alone(services, llm):
    llm.enqueue("fake-lite", "Paris.")

    reply = await ask(services, "What is the capital of France?")

    assert (reply.status, reply.text, reply.route.tier) == ("answered", "Paris.", "LITE")
    assert len(llm.requests_for("fake-lite")) == 1
    assert llm.requests_for("fake-flash") == []
    assert llm.requests_for("fake-pro") == []


async def test_an_unset_tier_borrows_the_next_configured_model(make_services, llm):
    services = make_services(MODEL_LITE=None, MODEL_PRO=None)
    llm.enqueue("fake-flash", "Paris, answered by the borrowed model.")

    reply = await ask(services, "What is the capital of France?")

    assert reply.status == "answered"
    assert reply.text == "Paris, answered by the borrowed model."
    assert reply.start_tier == "LITE"
    assert len(llm.requests_for("fake-flash")) == 1
    assert resolve(services.settings, "LITE").borrowed_from == "FLASH"
    assert resolve(services.settings, "PRO").model == "openai/fake-flash"


def test_a_missing_top_tier_borrows_downwards(make_services):
    services = make_services(MODEL_FLASH=None, MODEL_PRO=None)

    assert resolve(services.settings, "PRO").model == "openai/fake-lite"
    assert resolve(services.settings, "PRO").borrowed_from == "LITE"
    assert resolve(services.settings, "LITE").borrowed_from is None


async def test_without_any_model_the_reply_says_how_to_configure_one(make_services, llm):
    services = make_services(MODEL_LITE=None, MODEL_FLASH=None, MODEL_PRO=None)

    reply = await ask(services, "What is the capital of France?")

    assert reply.status == "no_model"
    assert "ELORA_MODEL_LITE" in reply.text
    assert llm.requests == []
    # The message is still archived, and the trace says why nothing answered.
    assert captures(services) == 1
    assert services.traces.get(reply.trace_id).error == "no_model"


async def test_without_any_model_memory_still_works(make_services, llm):
    services = make_services(MODEL_LITE=None, MODEL_FLASH=None, MODEL_PRO=None)
    entry = remember(services, "The spare house key is under the blue flower pot.")

    found = search_memory(services, "where is the spare key?")
    pack = build_pack(services, "where is the spare house key?")
    reply = await ask(services, "Where is the spare house key?")

    assert found[0]["memory_id"] == entry.memory_id
    assert entry.memory_id in pack.item_ids()
    assert entry.memory_id in reply.pack.item_ids()
    assert reply.status == "no_model"


async def test_a_local_model_litellm_does_not_know_gets_tools_and_an_unknown_cost(services, llm):
    llm.enqueue("fake-lite", "Paris.")

    reply = await ask(services, "What is the capital of France?")

    request = llm.requests_for("fake-lite")[0]
    assert {"search_memory", "save_memory", "new_cognitive_level"} <= set(tool_names(request))
    assert reply.route.calls[0]["cost"] is None
    assert reply.route.cost is None
    trace = services.traces.get(reply.trace_id)
    assert trace.cost is None
    assert trace.tokens_in == 50 and trace.tokens_out == 10


async def test_a_priced_model_records_its_cost_from_usage_tokens(make_services, llm):
    services = make_services(MODEL_LITE="openai/gpt-4o-mini")
    llm.enqueue("gpt-4o-mini", "Paris.")

    reply = await ask(services, "What is the capital of France?")

    # gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million completion tokens.
    expected = 50 * 0.15e-6 + 10 * 0.60e-6
    assert abs(reply.route.cost - expected) < 1e-9
    assert abs(services.traces.get(reply.trace_id).cost - expected) < 1e-9
    assert abs(services.spend.spent_today() - expected) < 1e-9
