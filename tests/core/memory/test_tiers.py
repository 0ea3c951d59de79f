from datetime import datetime

import pytest

from core.memory.api import save_memory
from core.memory.schema import TIER_MEANING
from core.memory.tier_policy import MATCH_BOOST, judge
from core.recall.lexical import terms
from core.recall.pack import build_pack
from core.recall.timeparse import parse_period
from core.storage.models import MemoryEntry
from tests.core.memory.helpers import NOW, entry


def _entry(tier: str, **fields) -> MemoryEntry:
    values = {
        "uuid": "u",
        "memory_id": "x.y",
        "tier": tier,
        "kind": "fact",
        "canonical_text": "texte",
        "embedding_text": "texte",
        "confidence": 0.9,
        "observations": 1,
        "topics": ["divers"],
        "created_at": NOW,
        "last_touched": NOW,
    }
    values.update(fields)
    return MemoryEntry(**values)


def _items(pack) -> dict[str, dict]:
    return {item["id"]: item for item in pack.items()}


@pytest.fixture
def dinners(services):
    for memory_id, text, when in [
        ("event.dinner-lea", "Dîner chez Léa et Hugo, raclette", datetime(2024, 6, 8, 20)),
        ("event.dinner-mum", "Dîner d'anniversaire de maman au restaurant", datetime(2024, 5, 18)),
        ("event.dinner-sushi", "Dîner sushis avec Inès", datetime(2024, 6, 14, 20)),
    ]:
        save_memory(
            services,
            entry(memory_id, text, kind="event", topics=["dîner"], valid_from=when),
        )


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("Avec qui j'ai dîné la semaine dernière ?", "event.dinner-lea"),
        ("Who did I have dinner with last week?", "event.dinner-lea"),
        ("Où est-ce que j'ai dîné en mai ?", "event.dinner-mum"),
        ("Qu'est-ce que j'ai mangé hier soir au dîner ?", "event.dinner-sushi"),
    ],
)
def test_episodic_entries_outside_the_named_period_are_cut(services, dinners, question, kept):
    pack = build_pack(services, question)

    recalled = [i for i in _items(pack) if i.startswith("event.")]
    assert recalled == [kept]
    cut = {c["id"]: c["reason"] for c in pack.cut}
    outside = {"event.dinner-lea", "event.dinner-mum", "event.dinner-sushi"} - {kept}
    assert outside <= set(cut)
    assert all(cut[i].startswith("outside") for i in outside)


def test_without_a_period_every_matching_episode_is_recalled(services, dinners):
    pack = build_pack(services, "Tu te souviens de mes dîners avec des amis ?")

    assert {"event.dinner-lea", "event.dinner-sushi"} <= set(_items(pack))


def test_low_confidence_semantic_entries_are_not_recalled(services):
    save_memory(
        services,
        entry("fact.lea-nuts", "Léa est allergique aux noix", confidence=0.9, topics=["léa"]),
    )
    save_memory(
        services,
        entry(
            "hypothesis.lea-strawberries",
            "Léa est peut-être allergique aux fraises",
            kind="hypothesis",
            confidence=0.3,
            truth_mode="hypothesis",
            topics=["léa"],
        ),
    )

    pack = build_pack(services, "À quoi Léa est-elle allergique ?")

    assert "fact.lea-nuts" in _items(pack)
    assert "hypothesis.lea-strawberries" not in _items(pack)
    cut = {c["id"]: c["reason"] for c in pack.cut}
    assert "below floor" in cut["hypothesis.lea-strawberries"]


def _l2_score(services, question: str, memory_id: str) -> tuple[float, str]:
    item = _items(build_pack(services, question))[memory_id]
    return item["score"], item["reason"]


@pytest.mark.parametrize(
    ("kind", "tier", "attributes", "text", "question", "reason"),
    [
        (
            "constraint",
            "procedural",
            {"triggers": ["virement", "paiement"]},
            "Demander l'accord de Marc avant de dépasser 500 € pour le garage",
            "Je dois faire un virement de 800 € au garage, je fais comment ?",
            "trigger virement",
        ),
        (
            "preference",
            "personalized",
            {"domain": "cuisine"},
            "J'aime les plats épicés mais jamais de coriandre",
            "Propose-moi un menu de cuisine pour samedi soir",
            "domain cuisine",
        ),
        (
            "fact",
            "environment",
            {"bucket": "backup"},
            "La sauvegarde nocturne du NAS échoue quand le disque USB est en veille",
            "Le backup de cette nuit a encore échoué, pourquoi ?",
            "bucket backup",
        ),
    ],
)
def test_a_matching_rule_trigger_domain_or_bucket_boosts_the_entry(
    services, kind, tier, attributes, text, question, reason
):
    memory_id = f"{tier}.subject"
    save_memory(services, entry(memory_id, text, kind=kind, tier=tier, topics=["quotidien"]))
    plain, plain_reason = _l2_score(services, question, memory_id)
    save_memory(
        services,
        entry(memory_id, text, kind=kind, tier=tier, topics=["quotidien"], attributes=attributes),
    )  # same text and vector: only the attributes changed

    boosted, boosted_reason = _l2_score(services, question, memory_id)

    if tier == "environment":
        # A prediction the question names comes with it in L1, whatever the focused recall
        # finds; one it does not name ranks lower than other tiers' unmatched entries.
        item = _items(build_pack(services, question))[memory_id]
        assert (plain_reason, boosted_reason) == ("prediction about something else", reason)
        assert item["layer"] == "L1" and boosted == pytest.approx(0.9 * MATCH_BOOST)  # conf.
        return
    assert (plain_reason, boosted_reason) == ("", reason)
    assert boosted == pytest.approx(plain * MATCH_BOOST, abs=2e-4)


@pytest.mark.parametrize("tier", ["episodic", "personalized", "environment"])
def test_topic_tags_count_when_the_tier_attribute_is_absent(tier):
    subject = _entry(tier, topics=["café", "matin"], attributes={})

    verdict = judge(subject, set(terms("Comment je prends mon café ?")), None)

    assert verdict.keep
    assert verdict.factor == MATCH_BOOST
    assert "café" in verdict.reason


def test_episodic_event_type_counts_as_a_match():
    visit = _entry("episodic", attributes={"event_type": "dentiste"}, valid_from=NOW)
    window = parse_period("Quand suis-je allé chez le dentiste cette semaine ?", NOW)

    verdict = judge(visit, set(terms("Quand suis-je allé chez le dentiste ?")), window)

    assert (verdict.keep, verdict.factor, verdict.reason) == (
        True,
        MATCH_BOOST,
        "event type dentiste",
    )


def test_every_recalled_item_carries_its_tier_and_what_it_means(services):
    for memory_id, kind, tier, text in [
        ("fact.camille-city", "fact", "semantic", "Camille habite à Lyon depuis mai"),
        ("event.camille-move", "event", "episodic", "Camille a déménagé à Lyon"),
        ("rule.camille-visit", "decision", "procedural", "Prévenir Camille avant de passer à Lyon"),
        ("pref.camille-train", "preference", "personalized", "Pour Lyon je préfère le train"),
        ("env.camille-sync", "fact", "environment", "Le script de sync Lyon tourne à 2h"),
    ]:
        save_memory(
            services,
            entry(memory_id, text, kind=kind, tier=tier, topics=["lyon"], valid_from=NOW),
        )

    items = _items(build_pack(services, "Qu'est-ce que tu sais sur Camille et Lyon ?"))

    tiers = {item["tier"]: item["tier_meaning"] for item in items.values()}
    assert tiers == TIER_MEANING
    assert TIER_MEANING == {
        "semantic": "pattern",
        "episodic": "trace",
        "procedural": "rule",
        "personalized": "preference",
        "environment": "prediction",
    }
