"""`elora council "QUESTION" --skills a,b,c [--rounds N] [--json]`."""

import json

from core.cli.main import main
from tests.core.council.support import QUESTION, SYNTHESIS, Council, contribution, seat_requests
from tests.llm_server import Reply

SHIPPED_PAIR = "devils-advocate,financial-analyst"


def test_the_council_command_prints_the_synthesis(llm, capsys):
    llm.responder = Council()

    code = main(["council", QUESTION, "--skills", SHIPPED_PAIR, "--rounds", "2"])

    assert code == 0
    out, err = capsys.readouterr()
    assert out.strip() == SYNTHESIS
    assert "round 1: 2 contribution(s)" in err and "round 2: 2 contribution(s)" in err
    assert max(len(b) for b in seat_requests(llm).values()) == 2


def test_the_council_command_prints_the_full_transcript_as_json(llm, capsys):
    llm.responder = Council(special={(2, 1): Reply(status=429)})

    code = main(["council", QUESTION, "--skills", SHIPPED_PAIR, "--rounds", "1", "--json"])

    assert code == 0
    transcript = json.loads(capsys.readouterr().out)
    assert transcript["question"] == QUESTION
    assert [p["skill_id"] for p in transcript["participants"]] == SHIPPED_PAIR.split(",")
    (record,) = transcript["rounds"]
    assert [c["text"] for c in record["contributions"]] == [contribution(1, 1)]
    assert [f["participant"] for f in record["failures"]] == ["Participant 2"]
    assert transcript["synthesis"]["recommendations"].startswith("1. Save the deposit.")
    assert transcript["tokens_in"] == 100 and transcript["tokens_out"] == 20  # one seat + synthesis
    assert "cost" in transcript and transcript["trace_id"]


def test_the_council_command_notes_the_round_cap(llm, capsys):
    llm.responder = Council()

    code = main(["council", QUESTION, "--skills", SHIPPED_PAIR, "--rounds", "7"])

    assert code == 0
    err = capsys.readouterr().err
    assert "note: rounds capped at 5 (asked 7)" in err
    assert "round 5: 2 contribution(s)" in err and "round 6" not in err


def test_the_council_command_distils_the_chat_it_is_given(llm, services, capsys):
    services.window("cli", "c1").append("user", "My rent is 900 a month.")
    llm.responder = Council()

    main(["council", QUESTION, "--skills", SHIPPED_PAIR, "--rounds", "1", "--chat", "c1"])

    (distillation,) = llm.requests_for("fake-lite")
    assert "> user: My rent is 900 a month." in distillation["messages"][0]["content"]


def test_the_council_command_with_one_skill_fails_listing_the_skills(llm, capsys):
    code = main(["council", QUESTION, "--skills", "devils-advocate"])

    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("elora: only 1 distinct participant(s) given")
    assert "financial-analyst (Financial analyst)" in err and "forge_skill" in err
    assert llm.requests == []
