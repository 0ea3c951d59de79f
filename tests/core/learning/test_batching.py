"""A burst of messages in one chat is read by one extraction call (the surface says another
message of the chat is already waiting); what the operator asked to remember is filed at once,
and consent given in the meantime still holds for every message of the batch."""

from __future__ import annotations

from core import app
from core.learning.engine import BATCH
from tests.core.learning.support import ask, extraction, proposals

MARK = "worth remembering"
CHAT = "burst"


def extraction_prompts(lite) -> list[str]:
    """The extraction prompts the LITE model received, in order."""
    texts = [r["messages"][-1]["content"] for r in lite.requests_for("fake-lite")]
    return [t for t in texts if MARK in t]


async def say(services, text: str, waiting: bool):
    """One message of the burst; `waiting`: the chat's next message is already there."""
    return await ask(services, text, chat_id=CHAT, more_waiting=lambda: waiting)


async def test_a_burst_is_read_by_one_extraction_call_and_each_candidate_keeps_its_message(
    model_services, lite
):
    lite.default_text = "Noted."
    lite.answer_when(
        MARK,
        extraction(
            {"text": "Camille's sister Léa works at the Lyon hospital", "kind": "fact",
             "topics": ["family"], "importance": 3, "confidence": 0.9,
             "temporality": "current", "messages": [3]}
        ),
    )  # fmt: skip
    texts = ["Ma sœur Léa habite à Lyon.", "Elle travaille à l'hôpital là-bas.", "On s'appelle le dimanche."]  # fmt: skip

    first = await say(model_services, texts[0], waiting=True)
    second = await say(model_services, texts[1], waiting=True)
    assert extraction_prompts(lite) == []  # nothing read yet: the chat's next message waits
    last = await say(model_services, texts[2], waiting=False)

    [prompt] = extraction_prompts(lite)
    assert all(text in prompt for text in texts)
    for reply in (first, second):
        assert reply.learning["skipped"].startswith("batched")
    assert last.learning["batched"] == 3 and last.learning["skipped"] is None
    [proposal] = proposals(model_services)
    assert proposal.source_capture_ids == [second.capture_id]  # message 3: the second one
    assert model_services.traces.get(last.trace_id).learning["proposals"] == [proposal.id]


async def test_a_long_burst_is_read_a_few_exchanges_at_a_time(model_services, lite):
    lite.default_text = "Noted."
    lite.answer_when(MARK, extraction())
    texts = [f"Note numéro {n} : le rendez-vous {n} est confirmé." for n in range(BATCH + 2)]

    for text in texts:
        await say(model_services, text, waiting=True)

    prompts = extraction_prompts(lite)
    assert len(prompts) == 1  # the first BATCH exchanges; the rest still wait for more
    assert all(t in prompts[0] for t in texts[:BATCH])
    assert not any(t in prompts[0] for t in texts[BATCH:])
    report = await app.flush_learning(model_services, "cli", CHAT)  # the burst is over
    assert report.batched == 2
    assert all(t in extraction_prompts(lite)[1] for t in texts[BATCH:])
    assert len(extraction_prompts(lite)) == 2


async def test_what_the_operator_asks_to_remember_is_not_kept_waiting(model_services, lite):
    lite.default_text = "Noted."
    lite.answer_when(MARK, extraction())

    reply = await say(model_services, "Remember that my locker code is 4711-B", waiting=True)

    assert reply.learning["skipped"].startswith("batched")
    assert reply.learning["approved"]  # filed (and approved) with this very message
    assert model_services.memory.count() == 1
    assert extraction_prompts(lite) == []


async def test_a_message_withheld_while_it_waited_is_never_read(model_services, lite):
    lite.default_text = "Noted."
    lite.answer_when(MARK, extraction())
    secret = "Le code wifi de ma voisine est ZEBRE-77."

    kept = await say(model_services, secret, waiting=True)
    withheld = await say(model_services, "ne retiens pas ça", waiting=True)
    last = await say(model_services, "Je pars à Rennes vendredi.", waiting=False)

    assert kept.learning["skipped"].startswith("batched")
    assert withheld.learning["suppressed"]
    [prompt] = extraction_prompts(lite)
    assert "Rennes" in prompt
    assert "ZEBRE" not in prompt  # withheld after it was kept: the model never reads it
    assert last.learning["batched"] == 2  # the instruction itself is not learned from


async def test_without_a_waiting_message_every_exchange_is_read_at_once(model_services, lite):
    lite.default_text = "Noted."
    lite.answer_when(MARK, extraction())

    await ask(model_services, "Je pars à Rennes vendredi.", chat_id=CHAT)
    await ask(model_services, "Mon train part à 8 h.", chat_id=CHAT)

    assert len(extraction_prompts(lite)) == 2
