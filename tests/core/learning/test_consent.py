"""Consent: "don't remember this" silences a turn, "never store X" becomes a standing rule that
blocks later candidates wherever they come from, and private mode keeps nothing."""

from __future__ import annotations

import pytest

from core.learning.backfill import learn_archive
from core.learning.consent import read_consent
from core.pipeline import Request
from tests.core.learning.support import ask, capture, extraction, proposals
from tests.llm_server import Reply, tool


@pytest.mark.parametrize(
    "message",
    [
        "Je suis allergique au latex, mais ne retiens pas ça.",
        "I'm allergic to latex. Don't remember this please",
        "J'ai décidé de quitter mon job en juin, c'est confidentiel, ne le retiens pas",
        "Off the record: I've decided to resign in June.",
    ],
)
async def test_dont_remember_this_suppresses_the_turns_candidates(services, message):
    reply = await ask(services, message)

    assert reply.learning["suppressed"] is True
    assert proposals(services) == []
    assert services.archive.counts()["captures"] == 1  # the archive stays verbatim


async def test_a_suppressed_turn_is_not_even_sent_to_the_extraction_model(model_services, lite):
    lite.enqueue("fake-lite", "Understood.")

    reply = await ask(model_services, "Je suis enceinte, ne retiens pas ça pour l'instant. Ok ?")

    assert reply.learning["suppressed"] is True
    assert len(lite.requests_for("fake-lite")) == 1  # the answer only
    assert proposals(model_services) == []


@pytest.mark.parametrize(
    ("message", "subject", "later"),
    [
        (
            "Never store anything about my health.",
            "health",
            "My health insurance is with Alan, policy 88-1204.",
        ),
        (
            "Ne retiens jamais rien sur ma santé.",
            "sante",
            "Ma mutuelle santé c'est la MGEN, contrat 77 301.",
        ),
    ],
)
async def test_never_store_becomes_a_standing_rule_that_blocks_later_candidates(
    services, message, subject, later
):
    first = await ask(services, message)

    rule = services.memory.require(first.learning["rule"])
    assert (rule.tier, rule.kind, rule.status) == ("procedural", "constraint", "active")
    assert rule.attributes["consent"] == "never_store"
    assert subject in rule.attributes["triggers"]
    assert proposals(services) == []  # the consent turn itself is not a candidate

    blocked = await ask(services, later)
    allowed = await ask(services, "Je travaille chez Lumen Logistics depuis 2021.")

    assert blocked.learning["blocked"] == 1 and blocked.learning["proposals"] == []
    assert allowed.learning["blocked"] == 0 and len(allowed.learning["proposals"]) == 1
    assert [p.text for p in proposals(services)] == [
        "Je travaille chez Lumen Logistics depuis 2021."
    ]


async def test_a_standing_rule_blocks_what_the_model_extracts(model_services, lite):
    lite.enqueue("fake-lite", "Noted.")  # a consent turn goes to no extractor
    first = await ask(model_services, "Never store anything about my health. Got it?")
    assert model_services.memory.require(first.learning["rule"]).attributes["triggers"] == [
        "health"
    ]
    lite.enqueue(
        "fake-lite",
        "Noted.",
        extraction(
            {"text": "Camille sees a physiotherapist for her health", "kind": "fact"},
            {"text": "Camille's favourite tea is genmaicha", "kind": "preference"},
        ),
    )

    reply = await ask(model_services, "What should I bring to the physio tomorrow?")

    assert reply.learning["blocked"] == 1
    assert [p.text for p in proposals(model_services)] == ["Camille's favourite tea is genmaicha"]


async def test_a_standing_rule_blocks_a_model_save_memory_call(model_services, lite):
    lite.enqueue("fake-lite", "Noted.")
    await ask(model_services, "Ne retiens jamais rien sur ma santé, d'accord ?")
    lite.enqueue(
        "fake-lite",
        Reply(tool_calls=[tool("save_memory", text="Camille a un souci de santé au genou")]),
        "Bien noté.",
        "{}",
    )

    await ask(model_services, "Quel kiné me conseilles-tu pour mon genou ?")

    assert proposals(model_services) == []
    tool_result = lite.requests_for("fake-lite")[-2]["messages"][-1]
    assert tool_result["role"] == "tool" and "never" in tool_result["content"].lower()


async def test_a_standing_rule_blocks_matching_messages_during_elora_learn(services):
    await ask(services, "Never store anything about my health.")
    capture(services, "My health insurance is with Alan, policy 88-1204.")
    capture(services, "I work at Lumen Logistics as a project lead.")

    outcome = await learn_archive(services)

    assert outcome["blocked"] == 1 and outcome["proposals"] == 1
    assert [p.text for p in proposals(services)] == ["I work at Lumen Logistics as a project lead."]


async def test_private_mode_stores_nothing_beyond_the_session(services):
    request = Request(
        surface="telegram", chat_id="42", user_id="7", private=True,
        text="Souviens-toi que mon code de carte est 4412, et je suis allergique au latex.",
    )  # fmt: skip

    reply = await services.assistant.handle(request)

    assert reply.capture_id is None
    assert reply.learning["extractor"] == "private"
    assert services.archive.counts()["captures"] == 0
    assert proposals(services) == [] and services.memory.count() == 0


async def test_private_mode_makes_no_extraction_call(model_services, lite):
    lite.enqueue("fake-lite", "Sure.")
    request = Request(surface="cli", chat_id="c1", text="I'm allergic to latex, what gloves?",
                      private=True)  # fmt: skip

    reply = await model_services.assistant.handle(request)

    assert reply.status == "answered"
    assert len(lite.requests_for("fake-lite")) == 1
    assert model_services.archive.counts()["captures"] == 0
    assert proposals(model_services) == []


def test_consent_phrases_are_read_in_french_and_english():
    assert read_consent("never store my bank details").never_store == "bank details"
    assert read_consent("Ne stocke jamais mes codes bancaires.").never_store == "codes bancaires"
    assert read_consent("oublie ça").suppress_turn
    assert not read_consent("Remember that I'm vegetarian").suppress_turn
    assert read_consent("Elora, never remember my PIN codes").never_store == "pin codes"
    assert read_consent("I never remember where I park").never_store is None
    assert read_consent("Je ne retiens jamais les prénoms, c'est terrible").never_store is None


def test_a_rule_does_not_block_unrelated_candidates(services):
    from core.learning.consent import add_never_store_rule, blocked_by_rule, never_store_patterns

    add_never_store_rule(services, "bank details")
    patterns = never_store_patterns(services)

    assert blocked_by_rule("Camille's bank details: FR76 3000 ...", patterns)
    assert not blocked_by_rule("Camille banks with Crédit Mutuel", patterns)  # not all terms
    assert not blocked_by_rule("Camille likes genmaicha tea", patterns)


def test_a_rule_listing_several_subjects_blocks_each_of_them(services):
    from core.learning.consent import add_never_store_rule, blocked_by_rule, never_store_patterns

    add_never_store_rule(
        services, read_consent("Never store my health, my bank or my kids").never_store
    )
    patterns = never_store_patterns(services)

    assert blocked_by_rule("Camille's kids go to school in Lyon", patterns)
    assert blocked_by_rule("Camille's bank is Crédit Mutuel", patterns)
    assert not blocked_by_rule("Camille works at Lumen Logistics", patterns)


async def test_private_mode_refuses_a_model_save_memory_call(model_services, lite):
    lite.enqueue(
        "fake-lite",
        Reply(tool_calls=[tool("save_memory", text="Camille is pregnant", kind="fact")]),
        "Congratulations!",
    )
    request = Request(surface="cli", chat_id="c1", text="Je suis enceinte, que manger ?",
                      private=True)  # fmt: skip

    await model_services.assistant.handle(request)

    assert proposals(model_services) == []
