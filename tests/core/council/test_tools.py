"""The council tools in the routing loop: offered by level, gated, and run for real."""

import pytest

from core.council.expert import consult_expert
from core.council.skills import get_skill
from core.council.tools import operator_asked_for_council
from tests.core.council.support import SYNTHESIS, Council, calls, seat_requests
from tests.core.routing.support import ask, tool_names, tool_results
from tests.llm_server import tool

PLAIN = "What is the capital of France?"
ASKED = "Ask the council: should I buy a flat?"
COUNCIL_CALL = tool(
    "consult_council", question="Should the operator buy a flat?",
    participants=["alpha-economist", "beta-urbanist"], rounds=1,
)  # fmt: skip


async def test_a_plain_question_at_lite_is_not_offered_the_council(services, llm):
    llm.enqueue("fake-lite", "Paris.")

    await ask(services, PLAIN)

    offered = tool_names(llm.requests_for("fake-lite")[0])
    assert "consult_council" not in offered and "delegate_to_subagent" not in offered
    assert {"consult_expert", "list_skills", "forge_skill", "list_sub_chats"} <= set(offered)


async def test_the_council_is_offered_at_lite_when_the_operator_asks_for_it(services, llm):
    llm.enqueue("fake-lite", "Let me think.")

    await ask(services, ASKED)

    assert "consult_council" in tool_names(llm.requests_for("fake-lite")[0])


async def test_the_council_is_offered_once_the_request_reaches_flash(services, llm):
    plan = "## Goal\nA careful answer at FLASH."
    llm.enqueue("fake-lite", calls(tool("new_cognitive_level", target_model="FLASH",
                                        transfer_plan=plan)))  # fmt: skip
    llm.enqueue("fake-flash", "Paris.")

    await ask(services, PLAIN)

    assert "consult_council" in tool_names(llm.requests_for("fake-flash")[0])


async def test_lite_calling_the_council_uninvited_gets_an_error_and_no_council_runs(
    services, panel, llm
):
    llm.enqueue("fake-lite", calls(COUNCIL_CALL), "Paris.")

    reply = await ask(services, PLAIN)

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert "not available at this level unless the operator asks" in result["error"]
    assert llm.requests_for("fake-flash") == []
    assert reply.route.tool_calls[0]["ok"] is False


async def test_a_council_asked_for_by_the_operator_runs_and_its_synthesis_comes_back(
    services, panel, llm
):
    llm.enqueue("fake-lite", calls(COUNCIL_CALL), "The council says: rent one more year.")
    llm.responder = Council()

    reply = await ask(services, ASKED)

    assert reply.text == "The council says: rent one more year."
    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["synthesis"] == SYNTHESIS
    assert result["rounds"] == 1 and result["failures"] == [] and result["notes"] == []
    assert sorted(seat_requests(llm)) == [1, 2]
    surfaces = {t.surface for t in services.traces.recent()}
    assert {"council", "cli"} <= surfaces


async def test_a_council_with_one_participant_returns_the_actionable_error(services, panel, llm):
    lonely = tool("consult_council", question="Buy a flat?", participants=["alpha-economist"])
    llm.enqueue("fake-lite", calls(lonely), "I need more experts.")

    await ask(services, ASKED)

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["error"].startswith("consult_council failed: only 1 distinct participant")
    assert "Available skills:" in result["error"] and "forge_skill" in result["error"]


async def test_list_skills_shows_ids_and_descriptions_but_not_instructions(services, panel, llm):
    llm.enqueue("fake-lite", calls(tool("list_skills")), "Here they are.")

    await ask(services, PLAIN)

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    economist = next(s for s in result["skills"] if s["skill_id"] == "alpha-economist")
    assert economist == {"skill_id": "alpha-economist", "name": "Economist",
                         "description": "Costs, incentives and trade-offs."}  # fmt: skip
    assert "AMBERFOX" not in str(result)


async def test_forge_skill_creates_a_skill_and_refuses_a_bad_one(services, llm):
    good = tool("forge_skill", skill_id="tax-advisor", name="Tax advisor",
                description="French income tax.", instructions="Cite the article; be brief.")  # fmt: skip
    bad = tool("forge_skill", skill_id="Tax Advisor", name="Tax", description="Tax.",
               instructions="Cite the article; be brief.")  # fmt: skip
    llm.enqueue("fake-lite", calls(good, bad), "Forged one.")

    await ask(services, PLAIN)

    forged, refused = tool_results(llm.requests_for("fake-lite")[1])
    assert forged == {"forged": "tax-advisor"}
    assert get_skill(services, "tax-advisor").description == "French income tax."
    assert refused["error"].startswith("forge_skill failed: skill_id 'Tax Advisor'")


async def test_consult_expert_runs_as_a_tool_and_lists_its_thread(services, panel, llm):
    expert = tool("consult_expert", role="alpha-economist", prompt="Buy or rent?")
    llm.enqueue("fake-lite", calls(expert), calls(tool("list_sub_chats")), "Rent, it says.")
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent one more year.</FINAL_ANSWER>")

    await ask(services, PLAIN, chat_id="c9")

    requests = llm.requests_for("fake-lite")
    (answer,) = tool_results(requests[1])
    assert answer["answer"] == "Rent one more year." and answer["final"] is True
    (listing,) = tool_results(requests[2])[-1:]
    assert [t["sub_sid"] for t in listing["threads"]] == [answer["sub_sid"]]


async def test_a_thread_of_another_chat_is_refused_to_the_model(services, panel, llm):
    llm.enqueue("fake-flash", "<FINAL_ANSWER>Rent.</FINAL_ANSWER>")
    theirs = await consult_expert(services, "alpha-economist", "Buy or rent?", chat_id="other")
    resume = tool("consult_expert", role="alpha-economist", prompt="And?",
                  sub_sid=theirs["sub_sid"])  # fmt: skip
    llm.enqueue("fake-lite", calls(resume), "Cannot.")

    await ask(services, PLAIN, chat_id="c9")

    (result,) = tool_results(llm.requests_for("fake-lite")[1])
    assert result["error"].startswith("consult_expert failed: no expert thread")


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (ASKED, True),
        ("Convene a round table on my move", True),
        ("Demande l'avis du conseil sur l'achat", True),
        (PLAIN, False),
        ("Remind me to call the bank", False),
    ],
)
def test_the_operator_asks_for_the_council_in_english_or_french(text, asked):
    assert operator_asked_for_council(text) is asked
