import json

import pytest

from core.recall.classifier import MODEL_THRESHOLD, classify, classify_request
from tests.core.memory.helpers import NOW
from tests.fakes import ScriptedModel


@pytest.mark.parametrize(
    ("message", "intent", "memory_need"),
    [
        ("Salut !", "chitchat", "none"),
        ("merci beaucoup", "chitchat", "none"),
        ("Thanks!", "chitchat", "none"),
        ("/status", "command", "none"),
        ("/remember je bois mon café sans sucre", "command", "none"),
        ("Tu te souviens de ce que j'ai dit sur le vélo ?", "question_about_past", "L2"),
        ("What did I say about the bike last week?", "question_about_past", "L2"),
        ("Qu'est-ce que j'ai mangé hier ?", "question_about_past", "L2"),
        ("Résume tout ce que je t'ai dit sur mon déménagement", "question_about_past", "L3"),
        ("Summarize everything I told you about the move", "question_about_past", "L3"),
        ("Où est-ce que j'habitais avant le déménagement ?", "question_about_past", "L3"),
        ("Where did I live before the move?", "question_about_past", "L3"),
        ("Écris un mail à mon propriétaire pour donner mon préavis", "task", "L2"),
        ("Write a haiku about autumn", "task", "L0-L1"),
    ],
)
def test_heuristics_read_intent_and_memory_need_in_both_languages(message, intent, memory_need):
    result = classify(message, NOW)

    assert (result.intent, result.memory_need) == (intent, memory_need)
    assert result.source == "heuristic"
    assert result.reasons


@pytest.mark.parametrize(
    ("message", "complexity", "start_tier"),
    [
        ("Salut !", "low", "LITE"),
        ("Write a haiku about autumn", "low", "LITE"),
        ("Explique-moi cette clause du contrat de location", "medium", "FLASH"),
        ("Explain the trade-offs of this contract clause", "high", "PRO"),
        (
            "Conçois une architecture et une stratégie de migration étape par étape",
            "high",
            "PRO",
        ),
        ("Design a software architecture and a migration strategy, step by step", "high", "PRO"),
    ],
)
def test_heuristics_grade_complexity_into_a_starting_tier(message, complexity, start_tier):
    result = classify(message, NOW)

    assert (result.complexity, result.start_tier) == (complexity, start_tier)


@pytest.mark.parametrize(
    ("message", "tier"),
    [
        ("Quelle est ma préférence pour le ton des réponses ?", "personalized"),
        ("Which tone do I prefer for replies?", "personalized"),
        ("Est-ce que je dois toujours valider les dépenses ?", "procedural"),
        ("Should I always check expenses with Marc?", "procedural"),
        ("Le serveur de build plante avec une erreur de déploiement", "environment"),
        ("The deploy script crashes with an error on the build server", "environment"),
        ("Qu'est-ce que j'ai mangé hier ?", "episodic"),
        ("What did we decide in 2023?", "episodic"),
    ],
)
def test_heuristics_pick_the_tiers_worth_searching(message, tier):
    assert tier in classify(message, NOW).tiers


@pytest.mark.parametrize("message", ["Qu'est-ce qu'il faut acheter", "Il faut acheter du pain"])
def test_a_bare_il_is_not_an_episodic_cue(message):
    assert "episodic" not in classify(message, NOW).tiers


def test_a_question_with_il_gets_the_broad_default_not_an_episodic_cue():
    cueless = classify("Qu'est-ce que tu penses de ce film ?", NOW)

    result = classify("Qu'est-ce qu'il faut acheter ?", NOW)

    assert (result.memory_need, result.tiers) == (cueless.memory_need, cueless.tiers)


@pytest.mark.parametrize(
    "message",
    [
        "Il y a eu un souci avec le bail ?",
        "Il y a un moment, on a parlé de quoi ?",
        "Il y a deux semaines, j'ai vu quel film ?",
    ],
)
def test_il_y_a_is_an_episodic_cue(message):
    assert classify(message, NOW).tiers == ["episodic"]


@pytest.mark.parametrize("message", ["should I take the train?", "How do I usually pay the rent?"])
def test_should_i_and_how_do_i_usually_are_procedural_cues(message):
    assert classify(message, NOW).tiers == ["procedural"]


def test_chitchat_searches_no_tier():
    assert classify("Bonne nuit !", NOW).tiers == []


def test_an_attached_document_is_a_document_request():
    result = classify("voici le bail, tu peux le garder ?", NOW, has_document=True)

    assert result.intent == "document"


@pytest.mark.parametrize(
    "message",
    ["Salut !", "/status", "What did I say about the bike last week?", "Write a haiku"],
)
def test_clear_messages_are_classified_with_confidence(message):
    assert classify(message, NOW).confidence >= MODEL_THRESHOLD


@pytest.mark.parametrize(
    "message", ["la voiture bleue", "the blue car", "Le serveur de build plante encore"]
)
def test_messages_without_cues_leave_the_heuristics_unsure(message):
    assert classify(message, NOW).confidence < MODEL_THRESHOLD


async def test_the_model_is_not_asked_when_the_heuristics_are_sure():
    model = ScriptedModel()

    result = await classify_request("Salut !", NOW, model=model)

    assert model.history == []
    assert (result.intent, result.source) == ("chitchat", "heuristic")


async def test_without_a_model_an_unsure_guess_stands():
    result = await classify_request("la voiture bleue", NOW, model=None)

    assert result.source == "heuristic"
    assert result == classify("la voiture bleue", NOW)


def _verdict(**overrides) -> str:
    data = {
        "intent": "question_about_past",
        "complexity": "medium",
        "memory_need": "L2",
        "tiers": ["episodic", "semantic"],
        "confidence": 0.8,
    }
    data.update(overrides)
    return json.dumps(data)


async def test_an_unsure_guess_is_settled_by_the_lite_model():
    model = ScriptedModel(_verdict())

    result = await classify_request("la voiture bleue", NOW, model=model)

    assert len(model.history) == 1
    tier, messages = model.history[0]["tier"], model.history[0]["messages"]
    assert tier == "LITE"
    assert "> la voiture bleue" in messages[-1]["content"]  # quoted as data
    assert result.source == "model"
    assert (result.intent, result.memory_need) == ("question_about_past", "L2")
    assert (result.complexity, result.start_tier) == ("medium", "FLASH")
    assert result.tiers == ["semantic", "episodic"]
    assert result.confidence == 0.8


async def test_a_model_reply_wrapped_in_prose_and_a_fence_is_accepted():
    reply = f"Voici la classification :\n```json\n{_verdict(intent='task')}\n```"

    result = await classify_request("the blue car", NOW, model=ScriptedModel(reply))

    assert (result.source, result.intent) == ("model", "task")


@pytest.mark.parametrize(
    "reply",
    [
        "Je pense que c'est une tâche.",
        _verdict(intent="gossip"),
        _verdict(memory_need="L9"),
        _verdict(tiers=["long-term"]),
        _verdict(confidence=1.7),
        '{"intent": "task", "complexity": "low"',
        '{"intent": "task"}',
        "[]",
    ],
)
async def test_invalid_model_output_falls_back_to_the_heuristic_guess(reply):
    heuristic = classify("la voiture bleue", NOW)

    result = await classify_request("la voiture bleue", NOW, model=ScriptedModel(reply))

    assert result.source == "heuristic"
    assert (result.intent, result.memory_need, result.tiers, result.confidence) == (
        heuristic.intent,
        heuristic.memory_need,
        heuristic.tiers,
        heuristic.confidence,
    )
    assert any("model classifier output rejected" in r for r in result.reasons)


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("Comment s'appelle le chien de Sam ?", True),
        ("Comment elle s'appelle, la copine de Hugo ?", True),
        ("Comment s'appellent les chats de Léa ?", True),
        ("Comment s'appelait le chien de Sam ?", False),  # the past: the plain ranking
        ("Comment on fait une tarte aux pommes ?", False),  # a how-to holds no value
    ],
)
def test_asking_what_something_is_called_is_a_present_state_question(question, present):
    # A name is a value that changes like any other (a new dog, a new partner): the latest
    # statement of it wins.
    assert classify(question, NOW).present_state is present


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("Where has Melanie camped?", False),
        ("How does Gina describe the studio that Jon has opened?", False),
        ("What have we booked for the holidays?", False),
        ("What do we have a shared account for?", True),  # an adjective after "a"
        ("Where do we have lunch on Fridays?", True),
    ],
)
def test_a_regular_past_participle_after_has_is_the_past(question, present):
    # "has camped", "has opened": an event of the past, every mention of it counts, not only
    # the latest statement (the list of irregular participles cannot name every verb).
    assert classify(question, NOW).present_state is present
