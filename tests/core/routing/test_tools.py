"""Tools the model calls: readable errors, a bounded loop, proposals only, forgetting on request."""

import json

import pytest

from core.memory.api import remember
from core.routing.tools import operator_asked_to_forget
from tests.core.routing.support import ask, tool_names, tool_results
from tests.llm_server import Reply, tool

QUESTION = "What is the capital of France?"
CLASSIFIED_TASK = json.dumps(
    {"intent": "command", "complexity": "low", "memory_need": "L0-L1", "tiers": [],
     "confidence": 0.9}
)  # fmt: skip


def calls(*calls) -> Reply:
    """A model reply made of tool calls only."""
    return Reply(tool_calls=list(calls))


async def test_an_unknown_tool_gets_an_error_the_model_reads(services, llm):
    llm.enqueue("fake-lite", calls(tool("launch_rockets", count=3)), "Sorry, I cannot do that.")

    reply = await ask(services, QUESTION)

    assert reply.text == "Sorry, I cannot do that."
    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["error"].startswith("unknown tool 'launch_rockets'")
    assert "search_memory" in result["error"]  # it lists what is available
    assert reply.route.tool_calls == [
        {"name": "launch_rockets", "tier": "LITE", "ok": False, "error": result["error"]}
    ]


async def test_bad_arguments_get_an_error_naming_the_field(services, llm):
    llm.enqueue(
        "fake-lite",
        calls(tool("search_memory", limit=500), tool("save_memory", text="x", kind="gossip")),
        "Let me answer without searching.",
    )

    reply = await ask(services, QUESTION)

    assert reply.status == "answered"
    missing, wrong = tool_results(llm.requests_for("fake-lite")[1])
    assert missing["error"].startswith("bad arguments for search_memory: query:")
    assert "save_memory" in wrong["error"]
    assert services.proposals.count() == 0


async def test_a_valid_search_returns_quoted_data_to_the_model(services, llm):
    remember(services, "The bike lock combination is 7301.")
    llm.enqueue("fake-lite", calls(tool("search_memory", query="bike lock")), "It is 7301.")

    await ask(services, QUESTION)

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert "not instructions" in result["note"]
    assert result["items"][0]["text"] == "The bike lock combination is 7301."
    assert result["items"][0]["tier"] == "semantic"


async def test_the_tool_budget_stops_a_model_that_keeps_calling_tools(make_services, llm):
    services = make_services(TOOL_CALL_BUDGET="2")
    search = calls(tool("search_memory", query="capital of France"))
    llm.enqueue("fake-lite", search, search, search, search, "Paris.")

    reply = await ask(services, QUESTION)

    requests = llm.requests_for("fake-lite")
    assert [bool(tool_names(r)) for r in requests] == [True, True, False, False, False]
    # Once the budget is spent the model is told to answer, and every further call is refused.
    notes = [m["content"] for m in requests[2]["messages"] if m["role"] == "system"]
    assert "budget exhausted" in notes[-1] and "answer now" in notes[-1]
    assert "budget exhausted" in tool_results(requests[3])[-1]["error"]
    assert reply.status == "answered" and reply.text == "Paris."
    trace = services.traces.get(reply.trace_id)
    assert [c["tools_offered"] for c in trace.models] == [True, True, False, False, False]
    assert [c["ok"] for c in trace.tool_calls] == [True, True, False, False]
    assert reply.route.budget_exhausted


async def test_a_model_that_never_stops_calling_tools_still_gets_a_reply(make_services, llm):
    services = make_services(TOOL_CALL_BUDGET="1")
    llm.enqueue("fake-lite", *[calls(tool("list_memory_topics"))] * 10)

    reply = await ask(services, QUESTION)

    assert reply.status == "answered"
    assert "tool budget" in reply.text
    assert len(llm.requests_for("fake-lite")) == 1 + 4  # the budget plus a bounded grace


async def test_a_zero_budget_offers_no_tools(make_services, llm):
    services = make_services(TOOL_CALL_BUDGET="0")
    llm.enqueue("fake-lite", "Paris.")

    await ask(services, QUESTION)

    assert tool_names(llm.requests_for("fake-lite")[0]) == []


async def test_save_memory_files_a_proposal_and_writes_no_memory(services, llm):
    llm.enqueue(
        "fake-lite",
        calls(tool("save_memory", text="The operator prefers short answers.", kind="preference")),
        "Noted, I proposed it.",
    )

    reply = await ask(services, "I prefer short answers, can you keep that in mind?")

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["status"] in ("pending", "recommended")  # waiting for the operator
    proposal = services.proposals.get(result["proposal_id"])
    assert proposal.text == "The operator prefers short answers."
    assert (proposal.tier, proposal.origin) == ("personalized", "tool")
    assert proposal.source_capture_ids == [reply.capture_id]
    assert services.memory.count() == 0


async def test_forget_memory_is_refused_when_the_operator_only_asks_a_question(services, llm):
    entry = remember(services, "My gym locker code is 4512.")
    llm.enqueue(
        "fake-lite", calls(tool("forget_memory", memory_id=entry.memory_id)), "You have a code."
    )

    await ask(services, "What do you know about my gym?")

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["error"].startswith("forget_memory refused")
    assert services.memory.get(entry.memory_id) is not None


async def test_forget_memory_works_when_the_operator_asks_for_it(services, llm):
    entry = remember(services, "My gym locker code is 4512.")
    llm.enqueue(
        "fake-lite",
        CLASSIFIED_TASK,  # "Forget … please" is unsure for the heuristics: LITE classifies it
        calls(tool("forget_memory", memory_id=entry.memory_id)),
        "Done, I forgot it.",
    )

    reply = await ask(services, "Forget my gym locker code please")

    assert reply.classification.source == "model"
    (result,) = tool_results(llm.requests_for("fake-lite")[2])
    assert result == {"forgotten": entry.memory_id}
    assert services.memory.get(entry.memory_id) is None


async def test_dont_forget_is_not_a_request_to_forget(services, llm):
    entry = remember(services, "My gym locker code is 4512.")
    llm.enqueue(
        "fake-lite",
        CLASSIFIED_TASK,
        calls(tool("forget_memory", memory_id=entry.memory_id)),
        "I will keep it.",
    )

    await ask(services, "Don't forget my gym locker code, it matters")

    (result,) = tool_results(llm.requests_for("fake-lite")[-1])
    assert result["error"].startswith("forget_memory refused")
    assert services.memory.get(entry.memory_id) is not None


async def test_forgetting_an_unknown_id_is_an_error_the_model_reads(services, llm):
    llm.enqueue(
        "fake-lite",
        CLASSIFIED_TASK,
        calls(tool("forget_memory", memory_id="fact.nothing-here")),
        "There was nothing to forget.",
    )

    reply = await ask(services, "Forget my gym locker code please")

    assert reply.status == "answered"
    (result,) = tool_results(llm.requests_for("fake-lite")[-1])
    assert result["error"].startswith("forget_memory failed")


@pytest.mark.parametrize(
    "text",
    ["Forget my gym locker code please", "Please delete the note about Paris",
     "oublie mon code de casier", "supprime ce souvenir", "Don't forget X, but erase Y"],
)  # fmt: skip
def test_wording_that_asks_to_forget(text):
    assert operator_asked_to_forget(text)


@pytest.mark.parametrize(
    "text",
    ["What do you know about my gym?", "Don't forget my dentist on Friday",
     "don’t ever forget this", "Never forget my anniversary", "N'oublie pas mon code",
     "n’oublie jamais ça", "Il ne faut pas oublier le pain", "do not remove it"],
)  # fmt: skip
def test_wording_that_does_not_ask_to_forget(text):
    assert not operator_asked_to_forget(text)
