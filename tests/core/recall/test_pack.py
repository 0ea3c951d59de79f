from datetime import datetime, timedelta

import pytest

from core.memory.api import save_memory
from core.recall.pack import build_pack
from core.recall.tokens import count_tokens
from tests.core.memory.helpers import NOW, entry

IDENTITY = """# Qui je suis
Je m'appelle Camille Roche, je suis architecte à Lyon.
## Mission d'Elora
M'aider à tenir mes projets et mes engagements sans rien oublier.
## Priorités
- Le chantier de la médiathèque de Villeurbanne
- Préparer le marathon d'octobre
"""

ITEM_KEYS = {
    "id",
    "tier",
    "kind",
    "text",
    "score",
    "confidence",
    "dates",
    "sources",
    "contradictions",
}


def _ids(layer) -> list[str]:
    return [item["id"] for item in layer.items]


def _write_identity(home, text: str = IDENTITY) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "identity.md").write_text(text, encoding="utf-8")


def test_l0_wakes_up_with_the_identity_file_and_axiom_preferences(services, home):
    _write_identity(home)
    save_memory(
        services,
        entry(
            "pref.reply-length", "Réponses courtes, sans listes", kind="preference", importance=5
        ),
    )
    save_memory(
        services,
        entry("pref.tutoiement", "Me tutoyer", kind="preference", importance=4),
    )
    save_memory(services, entry("fact.blood-type", "Mon groupe sanguin est O+", importance=5))

    pack = build_pack(services, "Salut !")

    l0 = pack.layers["L0"]
    assert _ids(l0) == ["identity", "pref.reply-length"]
    identity = l0.items[0]
    assert "Camille Roche" in identity["text"]
    assert identity["sources"] == [{"file": str(home / "identity.md")}]
    assert not any("identity" in m for m in pack.missing)


def test_a_missing_identity_file_is_reported(services, home):
    pack = build_pack(services, "Salut !")

    assert "identity" not in _ids(pack.layers["L0"])
    assert any("identity" in m and "identity.md" in m for m in pack.missing)


def test_chitchat_gets_only_the_wake_up(services, home):
    _write_identity(home)
    save_memory(services, entry("fact.car", "Ma voiture est une Zoé", importance=3))

    pack = build_pack(services, "Merci beaucoup !")

    assert [name for name, layer in pack.layers.items() if layer.ran] == ["L0"]
    assert "fact.car" not in pack.item_ids()


def test_l1_holds_the_essentials_ranked_by_importance_recency_and_confidence(services, clock):
    stale = NOW - timedelta(days=400)
    for memory_id, importance, confidence, touched in [
        ("rule.invoices", 4, 0.95, NOW),
        ("fact.car", 3, 0.9, NOW),
        ("fact.old-project", 4, 0.9, stale),
        ("fact.unsure", 4, 0.3, NOW),
        ("fact.trivia", 1, 0.95, NOW),
    ]:
        save_memory(
            services,
            entry(
                memory_id,
                f"Note {memory_id}",
                importance=importance,
                confidence=confidence,
                last_touched=touched,
            ),
        )
    save_memory(
        services,
        entry("event.big-meeting", "Réunion de chantier", kind="event", importance=5),
    )

    pack = build_pack(services, "Write a haiku about autumn")

    assert pack.classification.memory_need == "L0-L1"
    assert _ids(pack.layers["L1"]) == [
        "rule.invoices",
        "fact.car",
        "fact.old-project",
        "fact.unsure",
    ]
    assert not pack.layers["L2"].ran and not pack.layers["L3"].ran


def test_deep_search_runs_only_when_memory_need_is_l3(services):
    save_memory(services, entry("fact.bike", "Mon vélo est un Riverside 500", topics=["vélo"]))

    focused = build_pack(services, "Tu te souviens de ce que j'ai dit sur mon vélo ?")
    deep = build_pack(services, "Résume tout ce que je t'ai dit sur mon vélo")

    assert focused.classification.memory_need == "L2"
    assert focused.layers["L2"].ran and not focused.layers["L3"].ran
    assert deep.classification.memory_need == "L3"
    assert deep.layers["L3"].ran


def test_every_item_carries_the_contract_fields(services):
    save_memory(
        services,
        entry(
            "fact.flight",
            "Le vol pour Montréal part le 12 juin à 10h40 de Saint-Exupéry",
            topics=["voyage", "montréal"],
            sources=[
                {"surface": "telegram", "chat_id": "42", "message_id": "812", "date": "2024-05-30"}
            ],
            valid_from=datetime(2024, 5, 30),
        ),
    )

    pack = build_pack(services, "À quelle heure part mon vol pour Montréal ?").to_json()

    items = [i for layer in pack["layers"].values() for i in layer["items"]]
    flight = next(i for i in items if i["id"] == "fact.flight")
    assert set(flight) >= ITEM_KEYS
    assert (flight["tier"], flight["kind"], flight["confidence"]) == ("semantic", "fact", 0.9)
    assert flight["dates"]["valid_from"] == "2024-05-30T00:00:00"
    assert flight["sources"] == [
        {"surface": "telegram", "chat_id": "42", "message_id": "812", "date": "2024-05-30"}
    ]
    assert all(set(i) >= ITEM_KEYS for i in items)


@pytest.mark.parametrize(
    ("kind", "importance", "layer", "said", "later", "question"),
    [
        (
            "fact",
            1,
            "L2",
            "Le vol pour Montréal part le 12 juin",
            "Le vol pour Montréal part le 14 juin",
            "Quand part mon vol pour Montréal ?",
        ),
        (
            "fact",
            3,
            "L1",
            "Le vol pour Montréal part le 12 juin",
            "Le vol pour Montréal part le 14 juin",
            "Quand part mon vol pour Montréal ?",
        ),
        (
            "preference",
            5,
            "L0",
            "Le matin je bois du thé vert",
            "Le matin je bois un café serré",
            "Qu'est-ce que je bois le matin ?",
        ),
    ],
)
def test_a_known_contradiction_travels_with_the_item_in_every_layer(
    services, kind, importance, layer, said, later, question
):
    first = save_memory(services, entry("x.first", said, kind=kind, importance=importance))
    second = save_memory(services, entry("x.second", later, kind=kind, importance=importance))
    services.memory.link(second.uuid, first.uuid, "contradicts", note="message du 2 juin")

    pack = build_pack(services, question)

    by_id = {item["id"]: item for item in pack.items()}
    assert by_id["x.first"]["layer"] == layer
    assert by_id["x.first"]["contradictions"] == [
        {"id": "x.second", "relation": "contradicts", "text": later}
    ]
    assert [c["id"] for c in by_id["x.second"]["contradictions"]] == ["x.first"]


def test_entries_scoped_to_another_chat_stay_out(services):
    save_memory(
        services,
        entry("fact.group-bbq", "Le barbecue du groupe est chez Hugo", scope="chat:99"),
    )
    save_memory(
        services,
        entry("fact.my-bbq", "Le barbecue de la famille est chez Mamie", scope="chat:42"),
    )

    here = build_pack(services, "Le barbecue est chez qui ?", chat_id="42").item_ids()
    there = build_pack(services, "Le barbecue est chez qui ?", chat_id="99").item_ids()

    assert "fact.my-bbq" in here and "fact.group-bbq" not in here
    assert "fact.group-bbq" in there and "fact.my-bbq" not in there


def test_nothing_known_about_the_subject_is_listed_as_missing_with_deep_search_advised(services):
    save_memory(services, entry("fact.car", "My car is a blue Renault Zoe", topics=["car"]))

    pack = build_pack(services, "Who is my cat's vet?")

    assert pack.classification.memory_need == "L2"
    assert "fact.car" not in pack.item_ids()
    assert any(m.startswith("no maintained memory about") for m in pack.missing)
    assert any(m.startswith("no archived message about") for m in pack.missing)
    assert pack.advice["deep_search"] is True
    assert pack.advice["reasons"]


@pytest.mark.parametrize("question", ["Tu te souviens de ça ?", "Do you remember that?"])
def test_a_vague_question_with_nothing_found_advises_clarifying(services, question):
    pack = build_pack(services, question)

    assert pack.advice["clarify"] is True


def test_an_event_that_cannot_be_dated_advises_clarifying(services):
    pack = build_pack(services, "Où est-ce que j'habitais avant le mariage ?")

    assert pack.advice["clarify"] is True
    assert any("mariage" in r for r in pack.advice["reasons"])


def test_a_well_answered_question_needs_no_advice(services):
    save_memory(
        services,
        entry("fact.locker", "Mon code de casier à la piscine est 4711", topics=["casier"]),
    )

    pack = build_pack(services, "Quel est mon code de casier à la piscine ?")

    assert "fact.locker" in pack.item_ids()
    assert pack.advice["deep_search"] is False and pack.advice["clarify"] is False
    assert not any(m.startswith("no maintained memory") for m in pack.missing)


def test_item_token_costs_match_their_text(services, home):
    _write_identity(home, IDENTITY * 20)  # far more than L0 can hold
    save_memory(services, entry("fact.bike", "Mon vélo est un Riverside 500", topics=["vélo"]))

    pack = build_pack(services, "Tu te souviens de mon vélo ?", budget=600)

    identity = pack.layers["L0"].items[0]
    assert identity["truncated"] is True
    for item in pack.items():
        extra = sum(count_tokens(n["text"]) + 4 for n in item.get("neighbours", []))
        assert item["tokens"] == count_tokens(item["text"]) + extra + 12
