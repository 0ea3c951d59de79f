"""Cognitive escalation: LITE hands over to FLASH with a transfer plan, within the same request."""

from core.memory.api import remember
from tests.core.routing.support import ask, captures, system_of, tool_names, tool_results
from tests.llm_server import Reply, tool

PLAN = (
    "## Goal\nCompare the two mortgage offers.\n## Known\nRates 3.1% and 3.4%.\n"
    "## Remaining\nTotal cost over 20 years.\n## Pitfalls\nInsurance fees differ."
)
# Heuristics: a task with one demanding cue ("architecture") starts at FLASH...
FLASH_QUESTION = "Explain the architecture of a mortgage comparison spreadsheet"
# ...two demanding cues start at PRO.
PRO_QUESTION = "Design an architecture and strategy for our home budget algorithm"


def escalate(target: str, plan: str = PLAN) -> Reply:
    """A model reply asking to hand the request over."""
    return Reply(tool_calls=[tool("new_cognitive_level", target_model=target, transfer_plan=plan)])


async def test_lite_escalates_to_flash_with_its_transfer_plan(services, llm):
    llm.enqueue("fake-lite", escalate("FLASH"))
    llm.enqueue("fake-flash", "Offer A is cheaper overall.")

    reply = await ask(services, "Which of my two mortgage offers is cheaper?")

    assert reply.status == "answered"
    assert reply.text == "Offer A is cheaper overall."
    assert (reply.start_tier, reply.route.tier) == ("LITE", "FLASH")
    assert reply.route.escalations == [{"from": "LITE", "to": "FLASH", "plan_chars": len(PLAN)}]
    (flash_request,) = llm.requests_for("fake-flash")
    handover = [m["content"] for m in flash_request["messages"] if m["role"] == "system"][-1]
    for line in PLAN.splitlines():
        assert f"> {line}" in handover  # the plan travels, quoted, to the stronger model
    assert "LITE" in handover and "FLASH" in handover


async def test_escalation_keeps_the_same_evidence_pack_and_captures_nothing_new(services, llm):
    entry = remember(services, "Mortgage offers: bank A at 3.1% and bank B at 3.4% over 20 years.")
    llm.enqueue("fake-lite", escalate("FLASH"))
    llm.enqueue("fake-flash", "Offer A.")

    reply = await ask(services, "Which of my two mortgage offers is cheaper?")

    (lite_request,) = llm.requests_for("fake-lite")
    (flash_request,) = llm.requests_for("fake-flash")
    assert entry.memory_id in reply.pack.item_ids()
    assert f"> {entry.canonical_text}" in system_of(flash_request)
    # The same prompt, pack and conversation; only the tier it names is FLASH's own now.
    assert system_of(flash_request).replace("FLASH model", "LITE model") == system_of(lite_request)
    assert "running as the FLASH model" in system_of(flash_request)
    assert (
        flash_request["messages"][1 : len(lite_request["messages"])]
        == (lite_request["messages"][1:])
    )
    # One capture for the question and one for the answer; the handover added none.
    assert captures(services) == 2
    assert services.traces.get(reply.trace_id).escalations[0]["to"] == "FLASH"


async def test_flash_cannot_hand_a_request_down_to_lite(services, llm):
    llm.enqueue("fake-flash", escalate("LITE"), "Here is the explanation.")

    reply = await ask(services, FLASH_QUESTION)

    assert reply.start_tier == "FLASH"
    assert reply.text == "Here is the explanation."
    assert reply.route.escalations == []
    assert llm.requests_for("fake-lite") == []
    (result,) = tool_results(llm.requests_for("fake-flash")[1])
    assert "new_cognitive_level" in result["error"]
    assert "FLASH" in result["error"] and "PRO" in result["error"]


async def test_flash_cannot_escalate_to_its_own_level(services, llm):
    llm.enqueue("fake-flash", escalate("FLASH"), "Done at FLASH.")

    reply = await ask(services, FLASH_QUESTION)

    assert reply.route.tier == "FLASH"
    (result,) = tool_results(llm.requests_for("fake-flash")[1])
    assert result["error"].startswith("escalation FLASH→FLASH is not allowed")


async def test_flash_may_escalate_to_pro(services, llm):
    llm.enqueue("fake-flash", escalate("PRO"))
    llm.enqueue("fake-pro", "A thorough answer.")

    reply = await ask(services, FLASH_QUESTION)

    assert (reply.start_tier, reply.route.tier, reply.text) == (
        "FLASH",
        "PRO",
        "A thorough answer.",
    )
    # PRO is the top: it is no longer offered the escalation tool.
    assert "new_cognitive_level" not in tool_names(llm.requests_for("fake-pro")[0])


async def test_pro_cannot_escalate_anywhere(services, llm):
    llm.enqueue("fake-pro", escalate("FLASH"), escalate("PRO"), "PRO answers itself.")

    reply = await ask(services, PRO_QUESTION)

    assert reply.start_tier == "PRO"
    assert reply.text == "PRO answers itself."
    assert reply.route.escalations == []
    assert llm.requests_for("fake-flash") == []
    requests = llm.requests_for("fake-pro")
    assert "PRO→FLASH is not allowed" in tool_results(requests[1])[0]["error"]
    assert "PRO→PRO is not allowed" in tool_results(requests[2])[-1]["error"]
