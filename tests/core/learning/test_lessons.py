"""Reflexion writes lessons: prescriptive rules with their evidence. With a model, one LITE
call turns the day's corrections and 👎 into rules (validated; an unusable answer is an error,
reported, and the corrections wait for the next run); without one, rules are built from the
correction's content and a correction no pattern reads is flagged, never quoted."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.feedback import record_feedback
from core.learning.reflexion import reflect
from core.memory.schema import text_key
from tests.core.learning.support import ask
from tests.core.learning.test_reflexion import MORNING, lessons, store_turns

CORRECTIONS = [
    "Non, c'est faux : la démo est vendredi, pas jeudi.",
    "You forgot the agenda attachment again.",
    "I told you I don't want bullet points.",
    "Je t'ai déjà dit de répondre en français.",
    "Please don't use emojis in work emails.",
    "Arrête de me tutoyer.",
    "Tu t'es trompé.",  # says nothing of what is right: nothing to build a rule from
    "Quante volte devo ripeterlo?",
]


def _message_ids(services, capture_ids: list[str]) -> list[str]:
    return [
        services.db.rows("SELECT message_id FROM captures WHERE id = ?", (i,))[0][0]
        for i in capture_ids
    ]


def _question_then(services, question: str, corrections: list[str]) -> list[str]:
    """A question, Elora's reply, then each correction answering a reply of Elora's."""
    return store_turns(services, [question, *corrections], start=MORNING)[1:]


async def test_without_a_model_no_lesson_is_the_operator_s_message(services):
    ids = _question_then(services, "Quand est la démo Nordhaven ?", CORRECTIONS)

    outcome = await reflect(services)

    assert outcome["corrections"] == len(CORRECTIONS) and outcome["lessons_by"] == "heuristic"
    by_source = {p.source_capture_ids[0]: p.text for p in lessons(services)}
    for capture_id, said in zip(ids, CORRECTIONS, strict=True):
        rule = by_source.get(capture_id)
        if rule is not None:
            assert text_key(said) not in text_key(rule)  # never the message, even inside
            assert rule.split()[0].strip(",") in ("When", "Quand", "Always", "Toujours", "Avec")
    assert by_source[ids[0]] == (
        "Quand Camille demande « démo Nordhaven », tenir compte de sa correction : "
        "la démo est vendredi, pas jeudi"
    )
    assert by_source[ids[1]] == (
        "When Camille asks about “démo vendredi jeudi”, include the agenda attachment"
    )
    assert by_source[ids[2]] == (
        "Always, with Camille: Camille doesn't want bullet points (Camille had to say it again)"
    )
    assert by_source[ids[4]] == "When answering Camille, never use emojis in work emails"
    assert by_source[ids[5]] == "Avec Camille, ne plus jamais me tutoyer"
    # The two that say nothing structured are flagged for review, with no text of theirs.
    assert outcome["lessons_proposed"] == len(CORRECTIONS) - 2
    assert [f["message_id"] for f in outcome["needs_review"]] == _message_ids(services, ids[-2:])
    assert all(set(f) == {"surface", "chat_id", "message_id"} for f in outcome["needs_review"])


async def test_a_lesson_carries_its_evidence_into_the_rule_it_becomes(services):
    from core.learning.review import approve

    [capture_id] = _question_then(services, "Send the Atlas recap", ["You forgot the budget."])
    await reflect(services)
    [lesson] = lessons(services)

    rule = approve(services, lesson.id)

    assert (rule.tier, rule.kind) == ("procedural", "constraint")
    assert [s["capture_id"] for s in rule.sources] == [capture_id]
    assert [rule.sources[0]["message_id"]] == _message_ids(services, [capture_id])
    assert rule.attributes["triggers"] == ["send", "atlas", "recap"]


def _lessons_json(*lessons: dict) -> str:
    return json.dumps({"lessons": list(lessons)})


async def test_with_a_model_one_lite_call_writes_rules_with_their_evidence(model_services, lite):
    svc = model_services
    ids = _question_then(svc, "Résume la réunion Atlas", [
        "Non, c'est trop long, et en anglais en plus.",
        "Encore en anglais ?! Je t'ai dit en français.",
    ])  # fmt: skip
    lite.enqueue("fake-lite", _lessons_json({
        "rule": "When Camille asks for a summary, answer in French in three sentences",
        "evidence": [1, 2], "topics": ["summary", "language"], "triggers": ["résume", "summary"],
    }))  # fmt: skip

    outcome = await reflect(svc)

    assert outcome["lessons_proposed"] == 1 and outcome["lessons_by"] == "model"
    [lesson] = lessons(svc)
    assert lesson.text == "When Camille asks for a summary, answer in French in three sentences"
    assert lesson.source_capture_ids == ids
    assert lesson.candidate["attributes"]["triggers"] == ["résume", "summary"]
    [request] = lite.requests_for("fake-lite")
    prompt = request["messages"][-1]["content"]
    # The corrections reach the model as quoted data, with what they corrected.
    assert "> Encore en anglais ?! Je t'ai dit en français." in prompt
    assert "> Résume la réunion Atlas" in prompt
    # The call is traced, so its cost counts against the daily cap.
    [trace] = [t for t in svc.traces.recent() if t.surface == "job"]
    assert trace.classification["intent"] == "reflexion" and trace.models


async def test_a_thumbs_down_reaches_the_model_as_a_correction_without_words(model_services, lite):
    svc = model_services
    lite.enqueue("fake-lite", "Vendredi, bien sûr.")  # the answer to the question
    await ask(svc, "Plan my Thursday around the Nordhaven demo", chat_id="c9")
    record_feedback(svc, "c9", "down")
    lite.enqueue("fake-lite", _lessons_json(
        {"rule": "When planning around a demo, check its date in memory first", "evidence": [1]}
    ))  # fmt: skip

    outcome = await reflect(svc)

    assert outcome["lessons_proposed"] == 1
    prompt = lite.requests_for("fake-lite")[-1]["messages"][-1]["content"]
    assert "👎 on this answer, without words" in prompt
    assert "> Plan my Thursday around the Nordhaven demo" in prompt


@pytest.mark.parametrize(
    "answer",
    [
        "Here are some lessons: be more careful.",  # no JSON
        _lessons_json({"rule": "Too short", "evidence": [1]}),  # out of schema
        _lessons_json({"rule": "When asked about the demo, check the date", "evidence": [7]}),
        json.dumps({"lessons": "none"}),
    ],
)
def test_an_unusable_model_answer_is_reported_and_the_corrections_wait(
    lite, embedder, capsys, answer
):
    from core.config import load_settings
    from core.services import Services

    svc = Services(load_settings(), embedder=embedder)  # the clock `elora` itself reads
    store_turns(svc, ["Quand est la démo ?", "Non, c'est faux, c'est vendredi."],
                start=svc.clock.now().replace(hour=0, minute=1))  # fmt: skip
    lite.enqueue("fake-lite", answer)

    assert main(["jobs", "run", "reflexion"]) == 1

    assert "job reflexion failed" in capsys.readouterr().err
    assert lessons(svc) == []
    # Nothing was marked as reflected: the next run offers the same correction again.
    lite.enqueue("fake-lite", _lessons_json(
        {"rule": "When asked about the demo, give its date: Friday", "evidence": [1]}
    ))  # fmt: skip
    assert main(["jobs", "run", "reflexion", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lessons_proposed"] == 1
    svc.close()


async def test_the_model_repeating_a_correction_back_is_no_lesson(model_services, lite):
    _question_then(model_services, "Quand est la démo ?", ["Non, c'est faux, c'est vendredi."])
    lite.enqueue("fake-lite", _lessons_json(
        {"rule": "Non, c'est faux, c'est vendredi.", "evidence": [1]}
    ))  # fmt: skip

    assert (await reflect(model_services))["lessons_proposed"] == 0


async def test_over_the_spending_cap_reflexion_reports_it_and_calls_nothing(
    make_services, llm, clock
):
    from core.errors import EloraError

    svc = make_services(DAILY_SPEND_CAP="0.01", LEARNING_EXTRACTOR=None)
    svc.traces.record(surface="cli", cost=0.02)  # today's spend is past the cap
    store_turns(svc, ["Quand est la démo ?", "Non, c'est faux, c'est vendredi."],
                start=clock.now().replace(hour=0, minute=1))  # fmt: skip

    with pytest.raises(EloraError, match="spending cap"):
        await reflect(svc)

    assert llm.requests == [] and lessons(svc) == []
