"""A council's tokens and cost are traced as one "council" trace and count against the cap."""

import pytest

from core.council.council import consult_council
from core.errors import ProviderError, SpendingCapReached
from tests.core.council.support import QUESTION, SYNTHESIS, Council, forge_panel, seat_requests
from tests.llm_server import Reply

# gpt-4o-mini is priced offline by LiteLLM: $0.15 / $0.60 per million tokens.
PRICED = {"MODEL_LITE": "openai/gpt-4o-mini", "MODEL_FLASH": "openai/gpt-4o-mini"}
CALL = 50 * 0.15e-6 + 10 * 0.6e-6  # one scripted call of 50 tokens in, 10 out
PAIR = ["alpha-economist", "beta-urbanist"]


@pytest.fixture
def priced(make_services):
    """Services whose LITE and FLASH models have a known price, no cap."""
    services = make_services(**PRICED)
    forge_panel(services)
    return services


def capped(make_services, cap: str):
    """Priced services with a daily spending cap."""
    services = make_services(**PRICED, DAILY_SPEND_CAP=cap)
    forge_panel(services)
    return services


async def test_the_whole_council_is_one_trace_with_its_tokens_and_cost(priced, llm):
    priced.window("cli", "c1").append("user", "My rent is 900 a month.")
    llm.responder = Council()

    transcript = await consult_council(priced, QUESTION, PAIR, rounds=2, chat_id="c1")

    calls = 1 + 2 * 2 + 1  # distillation, two rounds of two, synthesis
    assert transcript["calls"] == calls
    assert (transcript["tokens_in"], transcript["tokens_out"]) == (50 * calls, 10 * calls)
    assert transcript["cost"] == pytest.approx(calls * CALL)
    assert transcript["rounds"][0]["contributions"][0]["cost"] == pytest.approx(CALL)
    trace = priced.traces.get(transcript["trace_id"])
    assert trace.surface == "council" and trace.chat_id == "c1"
    assert len(trace.models) == calls
    assert (trace.tokens_in, trace.tokens_out) == (50 * calls, 10 * calls)
    assert trace.cost == pytest.approx(calls * CALL)
    assert trace.classification["participants"] == PAIR
    assert priced.spend.spent_today() == pytest.approx(calls * CALL)


async def test_once_a_council_spent_the_cap_the_next_one_is_refused_before_any_call(
    make_services, llm
):
    services = capped(make_services, "0.001")
    expensive = Reply(text=SYNTHESIS, prompt_tokens=8000)  # $0.0012 on its own
    llm.responder = Council(synthesis=expensive)
    await consult_council(services, QUESTION, PAIR, rounds=1)
    sent = len(llm.requests)

    with pytest.raises(SpendingCapReached, match="spending cap"):
        await consult_council(services, "And should we buy a car?", PAIR, rounds=1)

    assert len(llm.requests) == sent


async def test_a_council_stops_at_the_cap_between_rounds_and_its_spend_is_kept(make_services, llm):
    services = capped(make_services, "0.001")
    llm.responder = Council(tokens=4000)  # each contribution costs about $0.0006

    with pytest.raises(SpendingCapReached):
        await consult_council(services, QUESTION, PAIR, rounds=3)

    assert max(len(b) for b in seat_requests(llm, "gpt-4o-mini").values()) == 1
    spent = 2 * (4000 * 0.15e-6 + 10 * 0.6e-6)
    assert services.spend.spent_today() == pytest.approx(spent)
    (trace,) = services.traces.recent()
    assert trace.surface == "council" and trace.error.startswith("SpendingCapReached")


async def test_a_failed_synthesis_still_records_what_the_rounds_cost(priced, llm):
    llm.responder = Council(synthesis=Reply(status=429))

    with pytest.raises(ProviderError):
        await consult_council(priced, QUESTION, PAIR, rounds=1)

    assert priced.spend.spent_today() == pytest.approx(2 * CALL)
    (trace,) = priced.traces.recent()
    assert trace.surface == "council" and len(trace.models) == 2
    assert trace.error.startswith("ProviderError")
