"""delegate_to_subagent: an agentic loop with memory tools, a call budget, escalation, and the
QUESTION: protocol, its thread kept in SQLite."""

import pytest

from core.council.delegate import delegate_to_subagent
from core.council.threads import list_sub_chats
from core.errors import NotFound, ProviderError
from core.memory.api import remember
from tests.core.council.support import calls, texts
from tests.core.routing.support import tool_names, tool_results
from tests.llm_server import Reply, tool

TASK = "Find when the lease of the flat ends."
INSTRUCTIONS = "You are a careful PARALEGAL-BRAVO; cite the memory id you used."


async def test_the_subagent_searches_memory_and_reads_the_result(services, llm):
    remember(services, "The flat lease ends on 30 June 2026.")
    llm.enqueue("fake-lite", calls(tool("search_memory", query="lease end")), "30 June 2026.")

    result = await delegate_to_subagent(services, TASK, INSTRUCTIONS)

    assert result["status"] == "done" and result["answer"] == "30 June 2026."
    assert result["tool_calls"] == 1 and result["tier"] == "LITE"
    first, second = llm.requests_for("fake-lite")
    assert "search_memory" in tool_names(first)
    assert INSTRUCTIONS in texts(first, "system")[0]
    (found,) = tool_results(second)
    assert found["items"][0]["text"] == "The flat lease ends on 30 June 2026."


async def test_the_subagent_has_memory_tools_but_no_council_or_delegation(services, llm):
    llm.enqueue("fake-lite", "Done.")

    await delegate_to_subagent(services, TASK)

    offered = tool_names(llm.requests_for("fake-lite")[0])
    assert "search_memory" in offered and "new_cognitive_level" in offered
    assert not {"consult_council", "delegate_to_subagent", "consult_expert"} & set(offered)


async def test_the_call_budget_withdraws_the_tools_and_the_subagent_answers(make_services, llm):
    services = make_services(SUBAGENT_CALL_BUDGET="1")
    search = calls(tool("search_memory", query="lease"))
    llm.enqueue("fake-lite", search, search, "From what I found: June.")

    result = await delegate_to_subagent(services, TASK)

    assert result["budget_exhausted"] is True
    assert result["answer"] == "From what I found: June."
    first, second = llm.requests_for("fake-lite")[:2]
    assert tool_names(first) and not tool_names(second)
    assert "budget exhausted" in texts(second, "system")[-1]


async def test_a_budget_can_be_given_per_delegation(services, llm):
    llm.enqueue("fake-lite", "Answer without tools.")

    result = await delegate_to_subagent(services, TASK, budget=0)

    assert result["answer"] == "Answer without tools."
    assert tool_names(llm.requests_for("fake-lite")[0]) == []


async def test_the_subagent_escalates_from_lite_to_flash(services, llm):
    plan = "## Goal\nRead the lease clauses; LITE cannot weigh them."
    llm.enqueue("fake-lite", calls(tool("new_cognitive_level", target_model="FLASH",
                                        transfer_plan=plan)))  # fmt: skip
    llm.enqueue("fake-flash", "The lease ends on 30 June 2026 (clause 4).")

    result = await delegate_to_subagent(services, TASK)

    assert result["tier"] == "FLASH"
    assert result["escalations"] == [{"from": "LITE", "to": "FLASH", "plan_chars": len(plan)}]
    assert result["answer"] == "The lease ends on 30 June 2026 (clause 4)."
    (flash,) = llm.requests_for("fake-flash")
    handover = texts(flash, "system")[-1]
    assert "taking over this request from the LITE model" in handover
    assert "> Read the lease clauses; LITE cannot weigh them." in handover


async def test_a_question_goes_back_to_the_caller_and_the_answer_resumes_the_thread(services, llm):
    llm.enqueue("fake-lite", "QUESTION: Which flat, Lyon or Grenoble?")
    asked = await delegate_to_subagent(services, TASK, INSTRUCTIONS, chat_id="c1")
    llm.enqueue("fake-lite", "The Lyon lease ends on 30 June 2026.")

    done = await delegate_to_subagent(services, "The Lyon one.", sub_sid=asked["sub_sid"],
                                      chat_id="c1")  # fmt: skip

    assert asked["status"] == "question"
    assert asked["question"] == "Which flat, Lyon or Grenoble?"
    assert "answer" not in asked
    assert done["sub_sid"] == asked["sub_sid"] and done["status"] == "done"
    request = llm.requests_for("fake-lite")[-1]
    assert texts(request, "user") == [TASK, "The Lyon one."]
    assert texts(request, "assistant") == ["QUESTION: Which flat, Lyon or Grenoble?"]
    # The caller answers without repeating its instructions: the sub-agent keeps them.
    assert INSTRUCTIONS in texts(request, "system")[0]


async def test_the_thread_is_kept_and_listed_for_its_chat(make_services, llm):
    first = make_services()
    llm.enqueue("fake-lite", "QUESTION: Which flat?")
    asked = await delegate_to_subagent(first, TASK, INSTRUCTIONS, chat_id="c1")
    later = make_services()
    llm.enqueue("fake-lite", "Lyon: 30 June 2026.")

    await delegate_to_subagent(later, "Lyon.", sub_sid=asked["sub_sid"], chat_id="c1")

    (thread,) = list_sub_chats(later, "c1")
    assert (thread["sub_sid"], thread["kind"]) == (asked["sub_sid"], "subagent")
    assert thread["summary"] == "Lyon: 30 June 2026."
    assert list_sub_chats(later, "c2") == []
    assert texts(llm.requests_for("fake-lite")[-1], "assistant") == ["QUESTION: Which flat?"]


async def test_a_subagent_thread_of_another_chat_is_refused(services, llm):
    llm.enqueue("fake-lite", "QUESTION: Which flat?")
    theirs = await delegate_to_subagent(services, TASK, chat_id="c2")
    sent = len(llm.requests)

    with pytest.raises(NotFound):
        await delegate_to_subagent(services, "Lyon.", sub_sid=theirs["sub_sid"], chat_id="c1")

    assert len(llm.requests) == sent


async def test_a_delegation_is_traced(services, llm):
    llm.enqueue("fake-lite", calls(tool("search_memory", query="lease")), "June.")

    result = await delegate_to_subagent(services, TASK, chat_id="c1")

    (trace,) = services.traces.recent()
    assert trace.surface == "subagent" and trace.chat_id == "c1"
    assert len(trace.models) == 2 and trace.tool_calls[0]["name"] == "search_memory"
    assert trace.classification["sub_sid"] == result["sub_sid"]


async def test_a_delegation_that_fails_midway_still_counts_what_it_spent(make_services, llm):
    services = make_services(MODEL_LITE="openai/gpt-4o-mini")
    llm.enqueue("gpt-4o-mini", calls(tool("search_memory", query="lease")), Reply(status=429))

    with pytest.raises(ProviderError):
        await delegate_to_subagent(services, TASK)

    assert services.spend.spent_today() == pytest.approx(50 * 0.15e-6 + 10 * 0.6e-6)
    (trace,) = services.traces.recent()
    assert trace.surface == "subagent" and trace.error.startswith("ProviderError")
    assert trace.tool_calls[0]["name"] == "search_memory"
