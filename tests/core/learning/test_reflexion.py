"""Reflexion: every operator turn of the day is read (no cap), corrections are found in French,
English and Italian and through 👎 feedback, violations of known rules count as recurrences,
the rest become proposed lessons."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from core.archive.records import CaptureIn
from core.cli.main import main
from core.feedback import record_feedback
from core.learning import reflexion
from core.learning.reflexion import is_correction, reflect
from tests.core.learning.support import NOW, ask, entry, proposals

MORNING = NOW.replace(hour=0, minute=1)


def store_turns(services, texts: list[str], start: datetime = MORNING) -> list[str]:
    """Archive a conversation in one batch: each operator turn answers a reply of Elora's (a
    correction corrects the assistant); return the operator turns' capture ids."""
    items = []
    for i, text in enumerate(texts):
        at = start + timedelta(seconds=2 * i)
        items += [
            CaptureIn(surface="telegram", chat_id="42", text="Voilà ce que je propose.",
                      sent_at=at, sender="Elora", role="assistant"),
            CaptureIn(surface="telegram", chat_id="42", text=text, sent_at=at + timedelta(seconds=1),
                      user_id="7", sender="Camille", operator=True),
        ]  # fmt: skip
    services.archive.store_batch(items, windows=False)
    return [i.id for i in items if i.role == "user"]


def lessons(services) -> list:
    return [p for p in proposals(services) if p.origin == "reflexion"]


@pytest.mark.parametrize(
    "text",
    [
        "No, that's wrong: the meeting is on Thursday.",
        "I told you I don't want bullet points.",
        "Non, c'est faux, la réunion est jeudi.",
        "Je t'ai déjà dit de ne pas me tutoyer.",
        "Tu t'es trompé de date.",
        "Sbagliato, la riunione è giovedì.",
        "Ti ho detto di non usare elenchi puntati.",
        "Quante volte devo ripeterlo?",
    ],
)
def test_corrections_are_recognised_in_french_english_and_italian(text):
    assert is_correction(text)


@pytest.mark.parametrize(
    "text",
    ["Thanks, that's perfect.", "Merci, c'est parfait.", "Grazie, perfetto.",
     "Can you book a table for two?"],
)  # fmt: skip
def test_ordinary_turns_are_not_corrections(text):
    assert not is_correction(text)


async def test_every_turn_of_the_day_is_read_past_the_internal_batch(services):
    total = reflexion.BATCH + 37
    texts = [f"Message {n} about the Atlas planning" for n in range(total)]
    texts[-1] = "Non, c'est faux : la démo est vendredi, pas jeudi."  # the very last turn
    store_turns(services, texts)
    store_turns(services, ["Tu te trompes encore"], start=NOW - timedelta(days=1))  # yesterday

    outcome = await reflect(services)

    assert outcome["turns_read"] == total
    assert outcome["corrections"] == 1 and outcome["lessons_proposed"] == 1
    [lesson] = lessons(services)
    assert "la démo est vendredi" in lesson.text
    assert (lesson.kind, lesson.tier, lesson.authority) == ("constraint", "procedural", "job")


async def test_a_violated_rule_counts_a_recurrence_instead_of_a_new_lesson(services):
    services.memory.save(entry("rule.french", "Réponds toujours en français", kind="constraint",
                               topics=["francais", "langue"]))  # fmt: skip
    store_turns(services, [
        "Je t'ai dit de répondre en français !",
        "Ti ho detto: in francese, per favore, sempre in francais.",
        "You forgot the agenda attachment again.",
        "Parfait, merci.",
    ])  # fmt: skip

    outcome = await reflect(services)

    assert outcome["turns_read"] == 4 and outcome["corrections"] == 3
    assert outcome["rule_violations"] == {"rule.french": 2}
    assert services.memory.require("rule.french").attributes["violations"] == 2
    [lesson] = lessons(services)
    assert "agenda attachment" in lesson.text


async def test_a_thumbs_down_marks_a_turn_as_a_correction(services):
    await ask(services, "Plan my Thursday around the Nordhaven demo", chat_id="c9")
    store_turns(services, ["Thanks"], start=NOW)

    record_feedback(services, "c9", "down")
    outcome = await reflect(services)

    assert outcome["corrections"] == 1
    [lesson] = lessons(services)
    assert "Nordhaven demo" in lesson.text


async def test_a_thumbs_up_is_not_a_correction(services):
    await ask(services, "Plan my Thursday around the Nordhaven demo", chat_id="c9")

    record_feedback(services, "c9", "up")

    assert (await reflect(services))["corrections"] == 0


async def test_reflecting_twice_on_a_day_neither_duplicates_lessons_nor_recounts(services):
    services.memory.save(entry("rule.french", "Réponds toujours en français", kind="constraint",
                               topics=["francais"]))  # fmt: skip
    store_turns(services, ["Je t'ai dit : en français !", "You forgot the attachment again."])

    await reflect(services)
    again = await reflect(services)

    assert again["lessons_proposed"] == 0 and again["rule_violations"] == {}
    assert len(lessons(services)) == 1
    assert services.memory.require("rule.french").attributes["violations"] == 1


async def test_reflexion_reads_the_day_the_clock_says(services, clock):
    store_turns(services, ["Non, c'est faux."], start=NOW - timedelta(days=1))

    assert (await reflect(services))["corrections"] == 0
    clock.advance(days=-1)
    assert (await reflect(services))["corrections"] == 1


def test_elora_jobs_run_reflexion_reports_its_counts(home, embedder, capsys):
    from core.config import load_settings
    from core.services import Services

    svc = Services(load_settings(), embedder=embedder)
    store_turns(svc, ["That's wrong, I said 10:15.", "You forgot the agenda again."],
                start=svc.clock.now().replace(hour=0))  # fmt: skip
    svc.close()

    assert main(["jobs", "run", "reflexion", "--json"]) == 0

    outcome = json.loads(capsys.readouterr().out)
    assert outcome["job"] == "reflexion"
    assert outcome["turns_read"] == 2 and outcome["lessons_proposed"] == 1
    # "I said 10:15" with nothing to say what about: flagged for review, never quoted as a rule.
    [flagged] = outcome["needs_review"]
    assert set(flagged) == {"surface", "chat_id", "message_id"}


async def test_a_correction_about_a_never_store_subject_never_becomes_a_lesson(services):
    from core.learning.consent import add_never_store_rule

    rule = add_never_store_rule(services, "salary")
    store_turns(services, ["No, that's wrong, my salary is 4,200 net.", "You forgot the PDF."])

    outcome = await reflect(services)

    # Consent is final: the salary message is not even read (no lesson, no "violation").
    assert outcome["withheld_by_consent"] == 1 and outcome["turns_read"] == 1
    assert outcome["corrections"] == 1 and outcome["lessons_proposed"] == 1
    assert rule.memory_id not in outcome["rule_violations"]
    assert ["PDF" in p.text for p in lessons(services)] == [True]


async def test_feedback_is_refused_when_unknown_or_when_there_is_no_reply(services):
    from core.errors import InvalidInput, NotFound

    with pytest.raises(NotFound):
        record_feedback(services, "nobody-here", "down")
    await ask(services, "Plan my Thursday around the Nordhaven demo", chat_id="c9")
    with pytest.raises(InvalidInput, match="up"):
        record_feedback(services, "c9", "meh")


async def test_feedback_moves_the_capability_profile_of_the_requests_kind(services):
    reply = await ask(services, "Plan my Thursday around the Nordhaven demo", chat_id="c9")
    dimension = reply.classification.intent

    after_down = record_feedback(services, "c9", "down")
    after_up = record_feedback(services, "c9", "up", trace_id=reply.trace_id)

    assert after_down == pytest.approx(0.4)  # 0.5 + 0.2 × (0 − 0.5)
    assert after_up == pytest.approx(0.52)
    assert services.profile.effective(dimension) == pytest.approx(0.52)
    signals = [f["signal"] for f in services.traces.get(reply.trace_id).feedback]
    assert signals == ["down", "up"]


async def test_the_same_feedback_twice_on_a_reply_counts_once(services):
    reply = await ask(services, "Plan my Thursday around the Nordhaven demo", chat_id="c9")
    dimension = reply.classification.intent

    first = record_feedback(services, "c9", "up", trace_id=reply.trace_id)
    again = record_feedback(services, "c9", "up", trace_id=reply.trace_id)

    assert first == again == pytest.approx(0.6)  # 0.5 + 0.2 × (1 − 0.5), once
    assert services.profile.effective(dimension) == pytest.approx(0.6)
    assert [f["signal"] for f in services.traces.get(reply.trace_id).feedback] == ["up"]
