"""A reader's nearest turns: probed only as deep as their scope's filter needs, never fewer
or other turns than the scope holds nearest."""

from datetime import datetime, timedelta

import numpy as np
import pytest

from core.archive.records import CaptureIn
from core.recall import turn_probe
from core.recall.turn_probe import PROBE_FACTOR, nearest_turns

GARDEN = [
    "Les tomates du potager ont besoin d'eau tous les soirs",
    "J'ai planté des courgettes et du basilic au jardin",
    "Le rosier grimpant a enfin fleuri contre le mur",
    "Il faut tailler la haie de laurier avant l'été",
    "Les limaces ont mangé toutes les salades du potager",
    "On a installé un récupérateur d'eau de pluie pour le jardin",
    "Le compost est prêt, je l'étale sur les plates-bandes",
    "Les fraisiers donnent beaucoup cette année",
]
TAXES = [
    "La déclaration d'impôts est à rendre avant le 6 juin",
    "Le prélèvement à la source a augmenté ce mois-ci",
    "J'ai reçu l'avis de taxe foncière pour l'appartement",
    "Il faut déclarer les frais réels pour le trajet en voiture",
    "Le crédit d'impôt pour l'emploi à domicile est remboursé en juillet",
    "La taxe d'habitation ne concerne plus la résidence principale",
    "Le comptable demande les justificatifs de dons",
    "On a payé le solde de l'impôt sur le revenu en septembre",
]


@pytest.fixture
def archive(services, monkeypatch):
    """Chat "garden" about the garden, chat "taxes" about taxes, each three times over."""
    monkeypatch.setattr(turn_probe, "_passed", {})
    day = datetime(2024, 3, 1, 9, 0)
    captures = [
        CaptureIn(
            surface="telegram",
            chat_id=chat,
            message_id=f"{chat}-{n}-{i}",
            text=f"{text} ({n})",
            sent_at=day + timedelta(minutes=len(texts) * n + i),
            user_id="7",
            sender="Camille",
        )
        for chat, texts in (("garden", GARDEN), ("taxes", TAXES))
        for n in range(3)
        for i, text in enumerate(texts)
    ]
    services.archive.store_batch(captures)
    services.archive.index_pending()
    return services


def _probes(services, monkeypatch) -> list[int]:
    """The depth of every probe of the `turns` collection from now on."""
    asked: list[int] = []
    query = services.vectors.query

    def recorded(collection, vector, limit, *args, **kwargs):
        if collection == "turns":
            asked.append(limit)
        return query(collection, vector, limit, *args, **kwargs)

    monkeypatch.setattr(services.vectors, "query", recorded)
    return asked


def _exact(services, vector, chat: str, fetch: int) -> list[str]:
    """The chat's `fetch` nearest turns by exact cosine over their stored vectors."""
    ids = [r[0] for r in services.db.rows("SELECT id FROM captures WHERE chat_id = ?", (chat,))]
    stored = services.vectors.get_vectors("turns", ids)
    cosine = {i: float(np.dot(np.asarray(v, dtype=np.float32), vector)) for i, v in stored.items()}
    return sorted(cosine, key=cosine.get, reverse=True)[:fetch]


def test_a_scope_holding_every_hit_is_probed_little_deeper_than_asked(archive, monkeypatch):
    vector = archive.embedder.embed_query("Quand faut-il arroser les tomates ?")
    asked = _probes(archive, monkeypatch)

    first = nearest_turns(archive, vector, 8, chats=["garden", "taxes"])
    again = nearest_turns(archive, vector, 8, chats=["garden", "taxes"])

    # The first probe of a scope goes PROBE_FACTOR times deeper; every hit passed, so the next
    # one goes only HEADROOM deeper, and finds the same turns.
    assert asked == [8 * PROBE_FACTOR, 10]
    assert again == first
    assert list(first) == list(nearest_turns(archive, vector, 8))  # everything was in scope


def test_a_probe_that_falls_short_goes_deeper_and_misses_none_of_the_scope(archive, monkeypatch):
    garden = archive.embedder.embed_query("Quand faut-il arroser les tomates ?")
    taxes = archive.embedder.embed_query("Quand faut-il rendre la déclaration d'impôts ?")
    asked = _probes(archive, monkeypatch)
    # Questions about the garden, from a reader of the garden chat only: all hits near the top
    # are theirs, so the scope's probe becomes shallow...
    nearest_turns(archive, garden, 6, chats=["garden"])
    nearest_turns(archive, garden, 6, chats=["garden"])
    assert asked[-1] < 6 * PROBE_FACTOR
    before = len(asked)

    # ... until they ask about taxes: the taxes chat fills the shallow probe, which is then
    # made deeper (or left to Chroma's filter) rather than answered with fewer turns.
    found = nearest_turns(archive, taxes, 6, chats=["garden"])

    assert asked[before] < 6 * PROBE_FACTOR and asked[before + 1] == 6 * PROBE_FACTOR
    assert list(found) == _exact(archive, taxes, "garden", 6)


def test_a_period_is_probed_deep_whatever_the_scope_kept_before(archive, monkeypatch):
    from core.recall.timeparse import TimeWindow

    vector = archive.embedder.embed_query("Quand faut-il arroser les tomates ?")
    asked = _probes(archive, monkeypatch)
    nearest_turns(archive, vector, 8, chats=["garden", "taxes"])
    window = TimeWindow("between", datetime(2024, 3, 1, 9, 0), datetime(2024, 3, 1, 9, 8))

    found = nearest_turns(archive, vector, 8, window=window, chats=["garden", "taxes"])

    assert asked[-1] == 8 * PROBE_FACTOR
    # The window holds each chat's first eight turns only.
    first = {r[0] for r in archive.db.rows("SELECT id FROM captures WHERE message_id LIKE '%-0-%'")}
    assert set(found) <= first and found
