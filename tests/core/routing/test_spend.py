"""The daily spending cap: PRO pauses first, then every model call stops, until midnight UTC."""

import pytest

from core.errors import SpendingCapReached
from tests.core.routing.support import ask, captures, tool_results
from tests.llm_server import Reply, tool

# Priced models LiteLLM knows offline, served by the fake server under these names.
PRICED = {
    "MODEL_LITE": "openai/gpt-4o-mini",  # $0.15 / $0.60 per million tokens
    "MODEL_FLASH": "openai/gpt-4o",
    "MODEL_PRO": "openai/gpt-4.1",
}
PRO_QUESTION = "Design an architecture and strategy for our home budget algorithm"


def expensive(text: str, dollars: float) -> Reply:
    """A gpt-4o-mini answer whose prompt tokens cost `dollars`."""
    return Reply(text=text, prompt_tokens=round(dollars / 0.15e-6), completion_tokens=0)


@pytest.fixture
def capped(make_services):
    """Priced tiers and a $0.001 daily cap (PRO pauses at 80 %, i.e. $0.0008)."""
    return make_services(**PRICED, DAILY_SPEND_CAP="0.001")


async def test_past_the_pro_share_an_escalation_to_pro_is_refused(capped, llm):
    llm.enqueue("gpt-4o-mini", expensive("Paris.", 0.0009))
    await ask(capped, "What is the capital of France?")
    plan = "## Goal\nA deep answer that needs PRO."
    llm.enqueue(
        "gpt-4o-mini",
        Reply(tool_calls=[tool("new_cognitive_level", target_model="PRO", transfer_plan=plan)]),
        "Rome, answered at LITE.",
    )

    reply = await ask(capped, "What is the capital of Italy?")

    assert capped.spend.spent_today() == pytest.approx(0.0009 + 2 * (50 * 0.15e-6 + 10 * 0.6e-6))
    assert reply.status == "answered" and reply.text == "Rome, answered at LITE."
    assert reply.route.escalations == []
    assert llm.requests_for("gpt-4.1") == []
    (result,) = tool_results(llm.requests_for("gpt-4o-mini")[-1])
    assert result["error"].startswith("escalation refused: PRO is paused")


async def test_past_the_pro_share_a_pro_request_starts_at_flash(capped, llm):
    llm.enqueue("gpt-4o-mini", expensive("Paris.", 0.0009))
    await ask(capped, "What is the capital of France?")
    llm.enqueue("gpt-4o", "A plan, from FLASH.")

    reply = await ask(capped, PRO_QUESTION)

    assert reply.gate["tier"] == "PRO"
    assert reply.start_tier == "FLASH"
    assert reply.text == "A plan, from FLASH."
    assert llm.requests_for("gpt-4.1") == []
    assert reply.route.cost > 0


async def test_before_the_pro_share_pro_is_used(capped, llm):
    llm.enqueue("gpt-4.1", "A plan, from PRO.")

    reply = await ask(capped, PRO_QUESTION)

    assert (reply.start_tier, reply.text) == ("PRO", "A plan, from PRO.")


async def test_at_the_cap_every_call_stops_and_no_request_leaves(make_services, llm, clock):
    # Learning and the model classifier are on, so they must be stopped too.
    services = make_services(**PRICED, DAILY_SPEND_CAP="0.001", LEARNING_EXTRACTOR="auto")
    llm.enqueue("gpt-4o-mini", expensive("Paris.", 0.0011))
    await ask(services, "What is the capital of France?")
    sent = len(llm.requests)

    reply = await ask(services, "gym stuff tomorrow maybe")  # unsure: would ask the classifier

    assert len(llm.requests) == sent
    assert reply.status == "spending_cap"
    assert "spending cap" in reply.text and "ELORA_DAILY_SPEND_CAP" in reply.text
    assert captures(services) == 3  # question, answer, and this message
    assert services.traces.get(reply.trace_id).error == "spending_cap"

    clock.advance(days=1)  # a new UTC day: calls resume
    llm.enqueue("gpt-4o-mini", "Good morning.")
    assert (await ask(services, "What is the capital of Spain?")).status == "answered"


async def test_without_a_cap_spend_is_only_recorded(make_services, llm):
    services = make_services(**PRICED)
    llm.enqueue("gpt-4o-mini", expensive("Paris.", 5.0), "Rome.")

    await ask(services, "What is the capital of France?")
    reply = await ask(services, "What is the capital of Italy?")

    assert reply.status == "answered"
    assert services.spend.spent_today() > 5.0


async def test_at_the_cap_a_call_outside_the_pipeline_is_refused_too(make_services, llm):
    spender = make_services(**PRICED, DAILY_SPEND_CAP="0.001")
    llm.enqueue("gpt-4o-mini", expensive("Paris.", 0.0011))
    await ask(spender, "What is the capital of France?")
    sent = len(llm.requests)

    # Services built anew, as `elora learn --mode model`, council or a job use them: no
    # Assistant is ever created, and the model client still obeys the cap.
    services = make_services(**PRICED, DAILY_SPEND_CAP="0.001")
    with pytest.raises(SpendingCapReached):
        await services.llm.complete_text("LITE", [{"role": "user", "content": "Hello?"}])

    assert len(llm.requests) == sent
    assert "assistant" not in vars(services)
