"""consult_expert: a 1:1 consultation that loops until <FINAL_ANSWER>, kept in SQLite by thread."""

import pytest

from core.council.expert import consult_expert
from core.council.threads import list_sub_chats
from core.errors import InvalidInput, NotFound, ProviderError, SpendingCapReached
from tests.core.council.support import DISTILLED, forge_panel, instructions_of, texts, whole
from tests.llm_server import Reply

ROLE = "alpha-economist"


@pytest.fixture
def experts(services):
    """The test home with the panel skills."""
    forge_panel(services)
    return services


async def test_the_expert_works_in_turns_until_its_final_answer(experts, llm):
    llm.enqueue(
        "fake-flash",
        "First, the deposit: 20 % of 250k.",
        "Then the monthly payment. <FINAL_ANSWER>Wait a year and save 50k.</FINAL_ANSWER> Bye.",
    )

    result = await consult_expert(experts, ROLE, "Should I buy a flat in Lyon?")

    assert result["final"] is True and result["note"] is None
    assert result["answer"] == "Wait a year and save 50k."
    assert result["iterations"] == 2 and result["role"] == ROLE
    first, second = llm.requests_for("fake-flash")
    assert instructions_of(ROLE) in texts(first, "system")[0]
    assert "> Should I buy a flat in Lyon?" in texts(first, "user")[0]
    assert texts(second, "assistant") == ["First, the deposit: 20 % of 250k."]
    assert "<FINAL_ANSWER>" in texts(second, "user")[-1]  # asked to continue towards it


async def test_the_iteration_cap_ends_the_loop_without_a_final_answer(experts, llm):
    llm.enqueue("fake-flash", "Thinking 1.", "Thinking 2.", "Thinking 3.", "Never asked.")

    result = await consult_expert(experts, ROLE, "Should I buy a flat in Lyon?", iterations=3)

    assert result["final"] is False
    assert "iteration cap" in result["note"]
    assert result["answer"] == "Thinking 3."
    assert len(llm.requests_for("fake-flash")) == 3


async def test_the_first_call_distils_the_active_chat(experts, llm):
    experts.window("cli", "c1").append("user", "My salary is 3200 a month.")
    llm.enqueue("fake-lite", DISTILLED)
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Fine.</FINAL_ANSWER>")

    await consult_expert(experts, ROLE, "Can I afford 1100 a month?", chat_id="c1")

    (distillation,) = llm.requests_for("fake-lite")
    assert "> user: My salary is 3200 a month." in whole(distillation)
    (request,) = llm.requests_for("fake-flash")
    assert f"> {DISTILLED}" in texts(request, "user")[0]


async def test_a_thread_resumes_from_sqlite_with_its_earlier_turns(make_services, llm):
    first = make_services()
    forge_panel(first)
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent for now.</FINAL_ANSWER>")
    opened = await consult_expert(first, ROLE, "Buy or rent?", chat_id="c1")
    later = make_services()  # a restart: a new Services object on the same home
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Then buy in 2026.</FINAL_ANSWER>")

    resumed = await consult_expert(later, ROLE, "And if rates drop?", opened["sub_sid"],
                                   chat_id="c1")  # fmt: skip

    assert resumed["sub_sid"] == opened["sub_sid"]
    assert resumed["answer"] == "Then buy in 2026."
    request = llm.requests_for("fake-flash")[-1]
    users = texts(request, "user")
    assert "> Buy or rent?" in users[0] and "> And if rates drop?" in users[-1]
    assert texts(request, "assistant") == ["<FINAL_ANSWER>Rent for now.</FINAL_ANSWER>"]
    assert llm.requests_for("fake-lite") == []  # the context is distilled once, when it opens


async def test_sub_chats_list_the_chats_threads_with_role_and_last_summary(experts, llm):
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent.</FINAL_ANSWER>")
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Wait.</FINAL_ANSWER>")
    mine = await consult_expert(experts, ROLE, "Buy or rent?", chat_id="c1")
    await consult_expert(experts, "beta-urbanist", "Which district?", chat_id="c2")

    (thread,) = list_sub_chats(experts, "c1")

    assert thread["sub_sid"] == mine["sub_sid"]
    assert (thread["kind"], thread["role"], thread["summary"]) == ("expert", ROLE, "Rent.")
    assert thread["turns"] == 2


async def test_a_thread_of_another_chat_is_refused(experts, llm):
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent.</FINAL_ANSWER>")
    theirs = await consult_expert(experts, ROLE, "Buy or rent?", chat_id="c2")
    sent = len(llm.requests)

    with pytest.raises(NotFound, match="list_sub_chats"):
        await consult_expert(experts, ROLE, "Tell me their secrets.", theirs["sub_sid"],
                             chat_id="c1")  # fmt: skip

    assert len(llm.requests) == sent


async def test_a_thread_is_resumed_only_with_its_own_expert(experts, llm):
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent.</FINAL_ANSWER>")
    opened = await consult_expert(experts, ROLE, "Buy or rent?", chat_id="c1")
    sent = len(llm.requests)

    with pytest.raises(InvalidInput, match="alpha-economist"):
        await consult_expert(experts, "beta-urbanist", "And you?", opened["sub_sid"],
                             chat_id="c1")  # fmt: skip

    assert len(llm.requests) == sent
    assert list_sub_chats(experts, "c1")[0]["role"] == ROLE


async def test_an_unknown_expert_names_the_available_ones(experts, llm):
    with pytest.raises(NotFound, match="beta-urbanist"):
        await consult_expert(experts, "astrologer", "Will rates drop?")

    assert llm.requests == []


async def test_a_consultation_is_traced_with_its_calls(experts, llm):
    llm.enqueue("fake-flash", "Hmm.", "<FINAL_ANSWER>Rent.</FINAL_ANSWER>")

    result = await consult_expert(experts, ROLE, "Buy or rent?", chat_id="c1")

    (trace,) = experts.traces.recent()
    assert trace.surface == "expert" and len(trace.models) == 2
    assert (trace.tokens_in, trace.tokens_out) == (100, 20)
    assert trace.classification["sub_sid"] == result["sub_sid"]


async def test_a_consultation_that_fails_midway_still_counts_what_it_spent(make_services, llm):
    services = make_services(MODEL_FLASH="openai/gpt-4o-mini")
    forge_panel(services)
    llm.enqueue("gpt-4o-mini", "Let me think.", Reply(status=429))

    with pytest.raises(ProviderError):
        await consult_expert(services, ROLE, "Buy or rent?")

    assert services.spend.spent_today() == pytest.approx(50 * 0.15e-6 + 10 * 0.6e-6)
    (trace,) = services.traces.recent()
    assert trace.surface == "expert" and trace.error.startswith("ProviderError")


async def test_at_the_spending_cap_no_call_leaves_not_even_the_distillation(make_services, llm):
    services = make_services(DAILY_SPEND_CAP="0")
    forge_panel(services)
    services.window("cli", "c1").append("user", "My salary is 3200 a month.")

    with pytest.raises(SpendingCapReached):
        await consult_expert(services, ROLE, "Can I afford 1100 a month?", chat_id="c1")

    assert llm.requests == []
