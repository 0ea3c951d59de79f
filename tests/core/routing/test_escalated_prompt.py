"""After an escalation the model that continues is told its own tier in the system prompt; the
evidence pack, the conversation and the transfer plan it receives stay the same."""

from core.memory.api import remember
from tests.core.routing.support import ask, system_of, tool_names
from tests.core.routing.test_escalation import FLASH_QUESTION, PLAN, escalate

QUESTION = "Which of my two mortgage offers is cheaper?"


def _without_tier(system: str) -> str:
    """A system prompt with its tier sentence and its escalation advice left out."""
    lines = [line for line in system.splitlines() if "You are running as the" not in line]
    text = "\n".join(lines)
    start = text.find("- If this request is beyond")
    if start >= 0:
        end = text.find("\n", text.find("instead of answering poorly", start))
        text = text[:start] + text[end + 1 :]
    return text


async def test_the_pro_model_is_told_it_runs_as_pro_after_lite_escalates(services, llm):
    entry = remember(services, "Mortgage offers: bank A at 3.1% and bank B at 3.4% over 20 years.")
    llm.enqueue("fake-lite", escalate("PRO"))
    llm.enqueue("fake-pro", "Offer A.")

    reply = await ask(services, QUESTION)

    assert (reply.start_tier, reply.route.tier) == ("LITE", "PRO")
    (lite_request,) = llm.requests_for("fake-lite")
    (pro_request,) = llm.requests_for("fake-pro")
    assert "You are running as the LITE model." in system_of(lite_request)
    pro_system = system_of(pro_request)
    assert "You are running as the PRO model." in pro_system
    assert "LITE model" not in pro_system
    # PRO is the top: neither the tool nor the advice to escalate is offered any more.
    assert "new_cognitive_level" not in pro_system
    assert "new_cognitive_level" not in tool_names(pro_request)
    # The same evidence pack and the same conversation; the plan follows, quoted.
    assert f"> {entry.canonical_text}" in pro_system
    assert _without_tier(pro_system) == _without_tier(system_of(lite_request))
    assert (
        pro_request["messages"][1 : len(lite_request["messages"])] == (lite_request["messages"][1:])
    )
    handover = [m["content"] for m in pro_request["messages"] if m["role"] == "system"][-1]
    assert all(f"> {line}" in handover for line in PLAN.splitlines())


async def test_each_model_of_a_two_step_escalation_is_told_its_own_tier(services, llm):
    llm.enqueue("fake-lite", escalate("FLASH"))
    llm.enqueue("fake-flash", escalate("PRO"))
    llm.enqueue("fake-pro", "A thorough answer.")

    reply = await ask(services, QUESTION)

    assert [e["to"] for e in reply.route.escalations] == ["FLASH", "PRO"]
    for model, tier in (("fake-lite", "LITE"), ("fake-flash", "FLASH"), ("fake-pro", "PRO")):
        (request,) = llm.requests_for(model)
        assert f"You are running as the {tier} model." in system_of(request)
    # FLASH may still escalate (to PRO), so it keeps the advice; PRO does not.
    assert "new_cognitive_level" in system_of(llm.requests_for("fake-flash")[0])
    assert "new_cognitive_level" not in system_of(llm.requests_for("fake-pro")[0])


async def test_a_request_that_starts_at_flash_is_told_flash(services, llm):
    llm.enqueue("fake-flash", "Here it is.")

    await ask(services, FLASH_QUESTION)

    (request,) = llm.requests_for("fake-flash")
    assert "You are running as the FLASH model." in system_of(request)
