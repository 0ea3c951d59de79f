"""The pack never spends more than its budget, layer by layer, and says what it left out."""

from datetime import datetime, timedelta

import pytest

from core.config import load_settings
from core.recall.pack import build_pack
from core.recall.tokens import count_tokens
from core.services import Services
from tests.core.memory.helpers import NOW, FixedClock, entry, message
from tests.fakes import BrokenEmbedder

QUESTIONS = [
    "Tu te souviens de ce que j'ai dit sur le vélo et la chaîne ?",  # L2
    "Résume tout ce que je t'ai dit sur mon vélo depuis mars",  # L3
]
BUDGETS = list(range(200, 3001, 200))
SUBJECTS = ["vélo", "chaîne", "pneu", "frein", "selle", "guidon", "garage", "balade"]


@pytest.fixture(scope="module")
def crowded(tmp_path_factory, embedder):
    """A home with a long identity, dozens of entries per layer and a busy chat archive."""
    home = tmp_path_factory.mktemp("crowded")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(home)
        settings = load_settings(home=home)
    home.joinpath("identity.md").write_text(
        "# Camille\n" + "Architecte à Lyon, cycliste du dimanche, aime les phrases courtes. " * 60,
        encoding="utf-8",
    )
    # Written while the model is down, then embedded in one batch: same stores, far faster.
    offline = Services(settings, embedder=BrokenEmbedder(), clock=FixedClock())
    for n in range(12):
        offline.memory.save(
            entry(
                f"pref.style-{n}",
                f"Préférence {n} : réponses brèves sur le sujet {SUBJECTS[n % 8]}",
                kind="preference",
                importance=5,
            )
        )
    for n in range(40):
        offline.memory.save(
            entry(
                f"fact.essential-{n}",
                f"Règle {n} pour l'entretien : vérifier le {SUBJECTS[n % 8]} tous les {n + 2} jours",
                kind="constraint" if n % 2 else "fact",
                importance=2 + n % 3,
                last_touched=NOW - timedelta(days=n * 5),
            )
        )
    for n in range(30):
        offline.memory.save(
            entry(
                f"fact.bike-{n}",
                f"Le {SUBJECTS[n % 8]} du vélo a été changé le {n % 28 + 1} du mois, note {n}",
                topics=["vélo", SUBJECTS[n % 8]],
            )
        )
    offline.close()
    svc = Services(settings, embedder=embedder, clock=FixedClock())
    assert svc.memory.index() == 82
    chat = []
    for day in range(24):
        start = datetime(2024, 3, 1, 8, 0) + timedelta(days=4 * day)
        burst = 4 if day % 3 == 0 else 1  # a few exchanges (window chunks), many lone messages
        for n in range(burst):
            subject = SUBJECTS[(day + n) % 8]
            chat.append(
                message(
                    f"{day}-{n}",
                    f"J'ai réglé le {subject} du vélo, la chaîne grince encore"
                    if burst == 1
                    else f"Sortie {day} : le {subject} du vélo a tenu, {n * 7} km sans souci",
                    start + timedelta(minutes=n),
                    sender="Camille" if n % 2 == 0 else "Elora",
                )
            )
    svc.archive.store_batch(chat)
    svc.archive.index_pending()
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def unbounded(crowded):
    """What each question would get with room for everything."""
    return {q: build_pack(crowded, q, budget=100_000) for q in QUESTIONS}


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("budget", BUDGETS)
def test_pack_fits_its_budget_and_reports_what_it_cut(crowded, unbounded, question, budget):
    pack = build_pack(crowded, question, budget=budget)
    data = pack.to_json()

    assert data["budget"]["total"] == budget
    assert data["budget"]["used"] <= budget
    assert data["budget"]["used"] == sum(layer["used"] for layer in data["layers"].values())
    for layer in data["layers"].values():
        assert layer["used"] <= layer["budget"]
        assert layer["used"] == sum(item["tokens"] for item in layer["items"])
        for item in layer["items"]:
            extra = sum(count_tokens(n["text"]) + 4 for n in item.get("neighbours", []))
            assert item["tokens"] >= count_tokens(item["text"]) + extra
    ids = pack.item_ids()
    assert len(ids) == len(set(ids))
    left_out = set(unbounded[question].item_ids()) - set(ids)
    assert left_out <= {c["id"] for c in data["cut"] if c.get("reason") == "budget"}


def test_a_small_budget_really_cuts_and_a_large_one_holds_more(crowded, unbounded):
    small = build_pack(crowded, QUESTIONS[1], budget=BUDGETS[0])
    large = build_pack(crowded, QUESTIONS[1], budget=BUDGETS[-1])

    assert any(c["reason"] == "budget" for c in small.cut)
    assert len(small.items()) < len(large.items()) <= len(unbounded[QUESTIONS[1]].items())
    assert large.layers["L0"].items and large.layers["L1"].items
    assert large.layers["L2"].items and large.layers["L3"].items
