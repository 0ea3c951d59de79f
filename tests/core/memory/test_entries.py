import uuid
from datetime import timedelta

import pytest

from core.errors import InvalidInput
from core.ids import MEMORY_NAMESPACE
from core.memory.api import list_memory_topics, save_memory, search_memory
from core.memory.schema import IMPORTANCE_WEIGHT, TIER_MEANING
from core.services import Services
from tests.core.memory.helpers import NOW, entry

# Vector paths: CI runs these once more against a `chroma run` server.
pytestmark = pytest.mark.chroma_server


def test_saving_the_same_memory_id_again_updates_the_one_entry(services, clock):
    first = save_memory(
        services, entry("fact.gym-locker", "Mon casier à la salle de sport est le 112")
    )
    clock.advance(days=3)
    second = save_memory(
        services, entry("fact.gym-locker", "Mon casier à la salle de sport est le 87")
    )

    assert first.uuid == second.uuid == str(uuid.uuid5(MEMORY_NAMESPACE, "fact.gym-locker"))
    assert services.memory.count() == 1
    assert services.vectors.count("memory") == 1
    stored = services.memory.get("fact.gym-locker")
    assert stored.canonical_text == "Mon casier à la salle de sport est le 87"
    assert stored.created_at == NOW  # an update keeps the entry's birth date
    texts = [hit["text"] for hit in search_memory(services, "casier salle de sport 112")]
    assert texts == ["Mon casier à la salle de sport est le 87"]


def test_memory_uuid_does_not_depend_on_the_home(services, settings, embedder, tmp_path):
    here = save_memory(services, entry("pref.reply-length", "Réponses courtes, sans listes"))
    from core.config import load_settings

    elsewhere = Services(load_settings(home=tmp_path / "other"), embedder=embedder)
    try:
        there = save_memory(elsewhere, entry("pref.reply-length", "Short replies, no lists"))
    finally:
        elsewhere.close()

    assert here.uuid == there.uuid
    assert uuid.UUID(here.uuid).version == 5


def test_importance_defaults_to_one(services):
    saved = save_memory(services, entry("fact.bakery", "La boulangerie ferme le lundi"))

    assert saved.importance == 1


@pytest.mark.parametrize(
    ("missing", "mentioned"),
    [
        ("confidence", "confidence"),
        ("observations", "observations"),
        ("last_touched", "last_touched"),
        ("topics", "topics"),
    ],
)
def test_entry_without_a_required_field_is_refused_and_not_written(services, missing, mentioned):
    data = entry("fact.bakery", "La boulangerie ferme le lundi")
    del data[missing]

    with pytest.raises(InvalidInput, match=mentioned):
        save_memory(services, data)

    assert services.memory.count() == 0
    assert services.vectors.count("memory") == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"importance": 0},
        {"importance": 6},
        {"confidence": 1.2},
        {"confidence": -0.1},
        {"observations": 0},
        {"topics": []},
        {"topics": ["  "]},
        {"tier": "long-term"},
        {"kind": "opinion"},
        {"scope": "team:x"},
        {"memory_id": "Mon Casier"},
        {"canonical_text": ""},
        {"status": "forgotten"},
        {"mood": "happy"},
        {"valid_from": NOW, "valid_to": NOW - timedelta(days=1)},
    ],
)
def test_entry_breaking_the_schema_is_refused(services, bad):
    data = entry("fact.bakery", "La boulangerie ferme le lundi")
    data.update(bad)

    with pytest.raises(InvalidInput):
        save_memory(services, data)

    assert services.memory.count() == 0


def test_invalid_update_leaves_the_stored_entry_untouched(services):
    save_memory(services, entry("fact.bakery", "La boulangerie ferme le lundi", importance=2))

    with pytest.raises(InvalidInput):
        save_memory(services, entry("fact.bakery", "La boulangerie ferme le mardi", confidence=3.0))

    assert services.memory.get("fact.bakery").canonical_text == "La boulangerie ferme le lundi"


def test_importance_five_lifts_the_weaker_of_two_close_matches_into_a_limit_of_one(services):
    question = "When is my yoga class?"
    save_memory(services, entry("fact.yoga-tuesday", "Le cours de yoga a lieu le mardi à 19h"))
    save_memory(services, entry("fact.yoga-thursday", "Le cours de yoga du jeudi est à 18h30"))
    save_memory(services, entry("fact.bread", "Le boulanger de la rue Victor Hugo fait du pain"))
    plain = search_memory(services, question, limit=2)
    ahead, behind = plain[0], plain[1]
    assert {ahead["memory_id"], behind["memory_id"]} == {"fact.yoga-tuesday", "fact.yoga-thursday"}

    weaker = services.memory.get(behind["memory_id"])
    save_memory(
        services, entry(weaker.memory_id, weaker.canonical_text, importance=5)
    )  # same text, same vector: only the weight changes
    top = search_memory(services, question, limit=1)

    # Over-fetching is what lets the second-best by similarity win the single slot.
    assert [hit["memory_id"] for hit in top] == [behind["memory_id"]]
    assert top[0]["score"] == pytest.approx(
        behind["score"] * IMPORTANCE_WEIGHT[5] / IMPORTANCE_WEIGHT[1], abs=2e-4
    )


def test_importance_weights_come_from_settings(home, embedder):
    from core.config import load_settings

    flat = {level: 1.0 for level in range(1, 6)}
    svc = Services(load_settings(importance_weights=flat), embedder=embedder)
    try:
        save_memory(svc, entry("fact.wifi", "Le code wifi du bureau est Tilleul-2024"))
        save_memory(
            svc, entry("fact.wifi-home", "Le wifi de la maison s'appelle Tilleul", importance=5)
        )
        hits = search_memory(svc, "code wifi du bureau", limit=2)
    finally:
        svc.close()

    assert hits[0]["memory_id"] == "fact.wifi"
    by_id = {h["memory_id"]: h["score"] for h in hits}
    assert by_id["fact.wifi"] > by_id["fact.wifi-home"]


def test_search_returns_five_hits_by_default_best_first(services):
    for n, day in enumerate(("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dim")):
        save_memory(services, entry(f"fact.pool-{n}", f"La piscine ouvre à {7 + n}h le {day}"))

    hits = search_memory(services, "horaires d'ouverture de la piscine")

    assert len(hits) == 5
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_search_hits_carry_their_tier_and_its_meaning(services):
    save_memory(
        services,
        entry("pref.coffee", "Je bois mon café sans sucre", kind="preference", topics=["café"]),
    )
    save_memory(
        services, entry("rule.expenses", "Valider toute dépense > 500 €", kind="constraint")
    )

    hits = search_memory(services, "café sans sucre ou dépense", limit=5)

    assert {(h["memory_id"], h["tier"], h["tier_meaning"]) for h in hits} == {
        ("pref.coffee", "personalized", "preference"),
        ("rule.expenses", "procedural", "rule"),
    }
    assert all(h["tier_meaning"] == TIER_MEANING[h["tier"]] for h in hits)


def test_search_filters_by_scope(services):
    save_memory(
        services,
        entry("fact.door-code", "Le digicode de l'immeuble est 4B21", scope="user:7"),
    )
    save_memory(
        services,
        entry("fact.door-code-office", "Le digicode du bureau est 9C03", scope="project:office"),
    )

    mine = search_memory(services, "digicode", scopes=["user:7"])
    office = search_memory(services, "digicode", scopes=["project:office", "global"])

    assert [h["memory_id"] for h in mine] == ["fact.door-code"]
    assert [h["memory_id"] for h in office] == ["fact.door-code-office"]


def test_search_skips_superseded_entries_unless_asked(services):
    save_memory(services, entry("fact.dentist-old", "Mon dentiste est le Dr Martin, rue Garibaldi"))
    save_memory(services, entry("fact.dentist", "Mon dentiste est le Dr Benali, cours Vitton"))
    services.memory.set_status("fact.dentist-old", "superseded", valid_to=NOW)

    current = search_memory(services, "qui est mon dentiste ?")
    history = search_memory(services, "qui est mon dentiste ?", statuses=("active", "superseded"))

    assert [h["memory_id"] for h in current] == ["fact.dentist"]
    assert {h["memory_id"] for h in history} == {"fact.dentist", "fact.dentist-old"}


def test_topics_list_the_ids_of_active_entries_of_one_scope(services):
    save_memory(
        services,
        entry(
            "pref.reply-length",
            "Réponses courtes",
            kind="preference",
            importance=5,
            topics=["Style", "réponses"],
        ),
    )
    save_memory(services, entry("fact.car", "Ma voiture est une Zoé", topics=["voiture"]))
    save_memory(services, entry("fact.chat-only", "Ce groupe parle de vélo", scope="chat:99"))
    save_memory(services, entry("fact.old-car", "Ma voiture était une Clio", topics=["voiture"]))
    services.memory.set_status("fact.old-car", "superseded")

    listed = [
        {key: item[key] for key in ("memory_id", "tier", "topics", "importance")}
        for item in list_memory_topics(services, "global")
    ]

    assert listed == [
        {
            "memory_id": "pref.reply-length",
            "tier": "personalized",
            "topics": ["style", "réponses"],
            "importance": 5,
        },
        {"memory_id": "fact.car", "tier": "semantic", "topics": ["voiture"], "importance": 1},
    ]
    assert [t["memory_id"] for t in list_memory_topics(services, "chat:99")] == ["fact.chat-only"]


def test_search_fuses_meaning_and_exact_words(services):
    save_memory(services, entry("fact.doctor", "Mon médecin traitant est le docteur Benali"))
    save_memory(services, entry("fact.locker", "Casier de la piscine : code 4711-ZEBRA"))
    save_memory(services, entry("fact.bread", "Le boulanger de la rue Victor Hugo fait du pain"))

    by_meaning, _ = services.memory.search("Who is my GP?", limit=1)
    by_words, _ = services.memory.search("ZEBRA", limit=1)

    assert by_meaning[0].entry.memory_id == "fact.doctor"
    assert by_meaning[0].lexical == 0.0 and by_meaning[0].similarity is not None
    assert by_words[0].entry.memory_id == "fact.locker"
    assert by_words[0].lexical == 1.0 and by_words[0].similarity is not None
