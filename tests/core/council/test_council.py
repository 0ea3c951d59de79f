"""consult_council: a Delphi round table of anonymous experts, then a synthesis."""

import threading

import pytest

from core.council.council import CouncilError, consult_council, parse_synthesis
from core.council.distill import NO_CONTEXT
from core.council.skills import list_skills
from core.errors import InvalidInput
from tests.core.council.support import (
    DISTILLED,
    PANEL,
    QUESTION,
    SYNTHESIS,
    Council,
    contribution,
    distillation_requests,
    forge_panel,
    instructions_of,
    seat_of,
    seat_requests,
    synthesis_requests,
    texts,
    whole,
)
from tests.llm_server import Reply

TRIO = ["alpha-economist", "beta-urbanist", "gamma-ethicist"]
SIX = [*TRIO, "devils-advocate", "financial-analyst", "privacy-lawyer"]


# -- who sits at the table ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("participants", "reason"),
    [
        (["alpha-economist"], "only 1 distinct participant"),
        (["alpha-economist", "alpha-economist"], "only 1 distinct participant"),
        ("alpha-economist, alpha-economist", "only 1 distinct participant"),
        ([], "only 0 distinct participant"),
        (SIX, "6 participants is more than 5"),
        (["alpha-economist", "astrologer"], "unknown skill 'astrologer'"),
    ],
)
async def test_a_council_that_cannot_be_convened_explains_what_to_do(
    services, panel, llm, participants, reason
):
    with pytest.raises(CouncilError) as caught:
        await consult_council(services, QUESTION, participants)

    message = str(caught.value)
    assert isinstance(caught.value, InvalidInput)
    assert reason in message
    assert "2 to 5 distinct skills" in message
    assert "Available skills:" in message
    for skill in list_skills(services):
        assert f"{skill.skill_id} ({skill.name})" in message
    assert "forge_skill" in message
    assert llm.requests == []


async def test_the_same_skill_by_id_and_by_name_is_one_participant(services, panel, llm):
    with pytest.raises(CouncilError, match="only 1 distinct participant"):
        await consult_council(services, QUESTION, ["alpha-economist", "Economist"])

    assert llm.requests == []


async def test_participants_may_be_given_as_comma_separated_ids(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, "alpha-economist,beta-urbanist", 1)

    assert [p["skill_id"] for p in transcript["participants"]] == TRIO[:2]


async def test_participants_are_anonymous_and_see_roles_but_not_each_others_instructions(
    services, panel, llm
):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO, rounds=2)

    assert transcript["participants"] == [
        {"name": f"Participant {n}", "skill_id": skill_id, "role": PANEL[skill_id][0]}
        for n, skill_id in enumerate(TRIO, start=1)
    ]
    by_seat = seat_requests(llm)
    assert sorted(by_seat) == [1, 2, 3]
    for seat, skill_id in enumerate(TRIO, start=1):
        assert len(by_seat[seat]) == 2
        for body in by_seat[seat]:
            seen = whole(body)
            assert instructions_of(skill_id) in texts(body, "system")[0]
            for n, (other_id, (role, description, marker)) in enumerate(PANEL.items(), 1):
                assert f'Participant {n}: "{role}" — "{description}"' in seen  # the roster
                if other_id != skill_id:
                    assert marker not in seen
                    assert other_id not in seen


# -- rounds ---------------------------------------------------------------------------------


async def test_round_one_gets_the_question_and_the_distilled_chat(services, panel, llm):
    window = services.window("cli", "c1")
    window.append("user", "I earn 3200 a month and my rent is 900.")
    window.append("assistant", "Noted: 3200 income, 900 rent.")
    llm.responder = Council()

    transcript = await consult_council(
        services, QUESTION, TRIO[:2], rounds=1, chat_id="c1", distillation_focus="housing money"
    )

    (distillation,) = distillation_requests(llm)
    prompt = texts(distillation, "user")[0]
    assert "> user: I earn 3200 a month and my rent is 900." in prompt
    assert "> assistant: Noted: 3200 income, 900 rent." in prompt
    assert 'on: "housing money".' in prompt  # the distillation_focus, quoted
    assert transcript["context"] == DISTILLED
    for bodies in seat_requests(llm).values():
        (first,) = bodies
        round_prompt = texts(first, "user")[-1]
        assert "Round 1 of 1" in round_prompt
        assert f"> {QUESTION}" in round_prompt
        assert f"> {DISTILLED}" in round_prompt


async def test_history_depth_limits_the_turns_distilled(services, panel, llm):
    window = services.window("cli", "c1")
    window.append("user", "OLDEST-TURN about the car.")
    window.append("user", "NEWEST-TURN about the flat.")
    llm.responder = Council()

    await consult_council(services, QUESTION, TRIO[:2], rounds=1, chat_id="c1", history_depth=1)

    (distillation,) = distillation_requests(llm)
    assert "NEWEST-TURN" in whole(distillation)
    assert "OLDEST-TURN" not in whole(distillation)


async def test_without_a_chat_nothing_is_distilled(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO[:2], rounds=1)

    assert llm.requests_for("fake-lite") == []
    assert transcript["context"] == NO_CONTEXT


async def test_later_rounds_get_the_others_previous_contributions_not_their_own(
    services, panel, llm
):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO, rounds=3)

    by_seat = seat_requests(llm)
    for seat in (1, 2, 3):
        for number in (2, 3):
            prompt = texts(by_seat[seat][number - 1], "user")[-1]
            assert f"Round {number} of 3" in prompt
            assert contribution(seat, number - 1) not in prompt
            for other in {1, 2, 3} - {seat}:
                assert contribution(other, number - 1) in prompt
            # Each participant keeps its own thread: its earlier positions are its own turns.
            own = texts(by_seat[seat][number - 1], "assistant")
            assert own == [contribution(seat, n) for n in range(1, number)]
    assert "this is the last round" in texts(by_seat[1][2], "user")[-1]
    assert [len(r["contributions"]) for r in transcript["rounds"]] == [3, 3, 3]
    assert transcript["rounds"][1]["contributions"][0]["text"] == contribution(1, 2)


async def test_rounds_default_to_three(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO[:2])

    assert [r["round"] for r in transcript["rounds"]] == [1, 2, 3]
    assert transcript["notes"] == []


async def test_more_than_five_rounds_runs_five_and_says_so(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO[:2], rounds=7)

    assert len(transcript["rounds"]) == 5
    assert transcript["notes"] == ["rounds capped at 5 (asked 7)"]
    assert max(len(b) for b in seat_requests(llm).values()) == 5


async def test_every_call_of_a_round_runs_concurrently(services, panel, llm):
    # Each seat's request waits at a barrier that opens only once all three are in flight
    # together: the round completes cleanly only if its calls truly run concurrently.
    council = Council()
    barrier = threading.Barrier(3, timeout=10)
    met: list[int] = []

    def responder(body):
        seat = seat_of(body)
        if seat is not None:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                return Reply(status=500)
            met.append(seat)
        return council(body)

    llm.responder = responder

    transcript = await consult_council(services, QUESTION, TRIO, rounds=1)

    assert sorted(met) == [1, 2, 3]
    assert not barrier.broken
    (record,) = transcript["rounds"]
    assert record["failures"] == []
    assert len(record["contributions"]) == 3


# -- failures -------------------------------------------------------------------------------


async def test_a_rate_limited_participant_is_noted_and_the_others_go_on(services, panel, llm):
    llm.responder = Council(special={(2, 1): Reply(status=429)})

    transcript = await consult_council(services, QUESTION, TRIO, rounds=2)

    first, second = transcript["rounds"]
    assert [c["participant"] for c in first["contributions"]] == ["Participant 1", "Participant 3"]
    (failure,) = first["failures"]
    assert failure["participant"] == "Participant 2"
    assert failure["skill_id"] == "beta-urbanist"
    assert failure["error"].startswith("ProviderError")
    # In round 2 the others hear nothing from the silent seat, which speaks again.
    for seat in (1, 3):
        prompt = texts(seat_requests(llm)[seat][1], "user")[-1]
        assert "Participant 2:" not in prompt
    assert len(second["contributions"]) == 3 and second["failures"] == []
    (synthesis,) = synthesis_requests(llm)
    assert '(Participant 2 did not answer this round: "ProviderError' in whole(synthesis)
    assert transcript["synthesis"]["text"] == SYNTHESIS


async def test_a_participant_that_times_out_is_noted_and_the_synthesis_still_comes(
    make_services, llm
):
    services = make_services(LLM_TIMEOUT_SECONDS="1")
    forge_panel(services)
    llm.responder = Council(special={(1, 1): Reply(text="too late", delay=4.0)})

    transcript = await consult_council(services, QUESTION, TRIO[:2], rounds=1)

    (record,) = transcript["rounds"]
    assert [f["participant"] for f in record["failures"]] == ["Participant 1"]
    assert [c["participant"] for c in record["contributions"]] == ["Participant 2"]
    assert transcript["synthesis"]["consensus"] == "Renting one more year is safe."


# -- synthesis ------------------------------------------------------------------------------


async def test_the_synthesis_reads_every_contribution_and_has_three_sections(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO, rounds=2)

    (synthesis,) = synthesis_requests(llm)
    prompt = whole(synthesis)
    for seat in (1, 2, 3):
        for number in (1, 2):
            assert contribution(seat, number) in prompt
    assert f"> {QUESTION}" in prompt
    assert 'Participant 2: "Urbanist"' in prompt
    assert transcript["synthesis"] == {
        "text": SYNTHESIS,
        "model": "openai/fake-flash",
        "consensus": "Renting one more year is safe.",
        "divergences": "Participant 1 wants to buy now; Participant 2 wants to wait.",
        "recommendations": "1. Save the deposit.\n2. Revisit in six months.",
    }


async def test_the_synthesis_model_can_be_chosen(services, panel, llm):
    llm.responder = Council()

    transcript = await consult_council(services, QUESTION, TRIO[:2], 1, synthesis_model="LITE")

    assert len(synthesis_requests(llm, "fake-lite")) == 1
    assert synthesis_requests(llm, "fake-flash") == []
    assert transcript["synthesis"]["model"] == "openai/fake-lite"


def test_parse_synthesis_splits_the_three_sections():
    assert parse_synthesis(SYNTHESIS)["divergences"].startswith("Participant 1 wants")


def test_parse_synthesis_reads_french_headings_too():
    text = (
        "## Consensus\nLouer encore un an.\n\n## Divergences :\nLe participant 1 veut acheter.\n\n"
        "## Recommandations\n1. Épargner l'apport."
    )

    assert parse_synthesis(text) == {
        "consensus": "Louer encore un an.",
        "divergences": "Le participant 1 veut acheter.",
        "recommendations": "1. Épargner l'apport.",
    }


def test_parse_synthesis_leaves_a_missing_section_empty():
    assert parse_synthesis("## Consensus\nAll agree.") == {
        "consensus": "All agree.",
        "divergences": "",
        "recommendations": "",
    }


async def test_an_empty_question_is_refused(services, panel, llm):
    with pytest.raises(CouncilError, match="needs a question"):
        await consult_council(services, "   ", TRIO)

    assert llm.requests == []


async def test_five_distinct_skills_sit_even_when_one_is_also_named_twice(services, panel, llm):
    llm.responder = Council()
    five = [*TRIO, "devils-advocate", "financial-analyst"]

    transcript = await consult_council(services, QUESTION, [*five, "Economist"], rounds=1)

    assert [p["skill_id"] for p in transcript["participants"]] == five
    assert [p["name"] for p in transcript["participants"]][-1] == "Participant 5"
