"""A participant whose earlier rounds all failed rejoins with the question and the context, as
if it were its first round; one that already spoke is not told them again."""

from core.council.council import consult_council
from tests.core.council.support import (
    QUESTION,
    Council,
    contribution,
    seat_requests,
    texts,
)
from tests.llm_server import Reply

TRIO = ["alpha-economist", "beta-urbanist", "gamma-ethicist"]


def _context_in(transcript: dict, prompt: str) -> bool:
    """Whether the distilled context every seat got in round 1 is in this prompt."""
    context = transcript["context"]
    return "discussed before (distilled)" in prompt and all(
        line in prompt for line in context.splitlines()
    )


def prompts_of(llm, seat: int) -> list[str]:
    """The latest user prompt of each request a seat sent (failed ones included)."""
    return [texts(body, "user")[-1] for body in seat_requests(llm)[seat]]


async def test_a_seat_rate_limited_in_round_one_gets_the_question_in_round_two(
    services, panel, llm
):
    llm.responder = Council(special={(2, 1): Reply(status=429)})

    transcript = await consult_council(services, QUESTION, TRIO, rounds=2)

    assert [f["participant"] for f in transcript["rounds"][0]["failures"]] == ["Participant 2"]
    _failed, rejoined = prompts_of(llm, 2)
    assert "Round 2 of 2" in rejoined
    assert QUESTION in rejoined and _context_in(transcript, rejoined)
    # It also hears what the others said in round 1, to reason from.
    assert contribution(1, 1) in rejoined and contribution(3, 1) in rejoined
    # Its request holds no trace of the failed attempt: system, then this one prompt.
    body = seat_requests(llm)[2][1]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    # Seats that spoke in round 1 keep the question in their history, not in the new prompt.
    for seat in (1, 3):
        _, second = prompts_of(llm, seat)
        assert QUESTION not in second
        assert QUESTION in texts(seat_requests(llm)[seat][1], "user")[0]
    assert len(transcript["rounds"][1]["contributions"]) == 3


async def test_a_seat_that_failed_two_rounds_still_gets_the_question_in_round_three(
    services, panel, llm
):
    llm.responder = Council(special={(1, 1): Reply(status=503), (1, 2): Reply(status=429)})

    transcript = await consult_council(services, QUESTION, TRIO, rounds=3)

    *_, third = prompts_of(llm, 1)
    assert "Round 3 of 3" in third and QUESTION in third and _context_in(transcript, third)
    assert [c["participant"] for c in transcript["rounds"][2]["contributions"]] == [
        "Participant 1", "Participant 2", "Participant 3",
    ]  # fmt: skip


async def test_a_seat_that_timed_out_in_round_one_gets_the_question_in_round_two(
    make_services, llm
):
    from tests.core.council.support import forge_panel

    services = make_services(LLM_TIMEOUT_SECONDS="3")
    forge_panel(services)
    llm.responder = Council(special={(1, 1): Reply(text="too late", delay=8.0)})

    transcript = await consult_council(services, QUESTION, TRIO[:2], rounds=2)

    assert [f["participant"] for f in transcript["rounds"][0]["failures"]] == ["Participant 1"]
    rejoined = prompts_of(llm, 1)[-1]
    assert "Round 2 of 2" in rejoined and QUESTION in rejoined
    assert _context_in(transcript, rejoined)
