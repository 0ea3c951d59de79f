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


def _probes(services, monkeypatch) -> list[tuple[int, bool, int | None]]:
    """Every query of the `turns` collection from now on: (depth, whether a filter was given,
    how many ids it was asked to search among, if any)."""
    asked: list[tuple[int, bool, int | None]] = []
    query = services.vectors.query

    def recorded(collection, vector, limit, where=None, *args, **kwargs):
        if collection == "turns":
            among = kwargs.get("among")
            asked.append((limit, where is not None, None if among is None else len(among)))
        return query(collection, vector, limit, where, *args, **kwargs)

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
    assert asked == [(8 * PROBE_FACTOR, False, None), (10, False, None)]
    assert again == first
    assert list(first) == list(nearest_turns(archive, vector, 8))  # everything was in scope


def test_a_probe_that_falls_short_goes_as_deep_as_its_share_needs(archive, monkeypatch):
    taxes = archive.embedder.embed_query("Quand faut-il rendre la déclaration d'impôts ?")
    # A reader of the garden chat only, whose questions so far all found their own chat...
    turn_probe._passed[frozenset({"garden"})] = 1.0
    asked = _probes(archive, monkeypatch)

    # ... asks about taxes: the taxes chat fills the shallow probe (at most 24 of its 25 hits:
    # the chat holds 24 turns), and the share it kept says how much deeper to go.
    found = nearest_turns(archive, taxes, 20, chats=["garden"])

    assert asked[0] == (25, False, None) and len(asked) == 2
    assert asked[1][0] > 25 and asked[1][1:] == (False, None)  # deeper, still unfiltered
    assert list(found) == _exact(archive, taxes, "garden", 20)
    assert turn_probe._passed[frozenset({"garden"})] == 0.5  # 24 of the 48 turns


def test_a_scope_keeping_too_few_hits_is_searched_among_its_ids_or_filtered(archive, monkeypatch):
    taxes = archive.embedder.embed_query("Quand faut-il rendre la déclaration d'impôts ?")
    turn_probe._passed[frozenset({"garden"})] = 1.0
    # Probing deep enough for a garden share under three quarters would pass the limit.
    monkeypatch.setattr(turn_probe, "MAX_PROBE", 10)
    asked = _probes(archive, monkeypatch)

    found = nearest_turns(archive, taxes, 6, chats=["garden"])

    assert asked == [(8, False, None), (6, True, 24)]  # among the chat's 24 turns
    assert list(found) == _exact(archive, taxes, "garden", 6)

    # More turns in the scope than a search among ids takes: Chroma's filter.
    monkeypatch.setattr(turn_probe, "AMONG_MAX", 10)
    turn_probe._passed[frozenset({"garden"})] = 1.0
    del asked[:]
    found = nearest_turns(archive, taxes, 6, chats=["garden"])
    assert asked == [(8, False, None), (6, True, None)]
    assert list(found) == _exact(archive, taxes, "garden", 6)


def test_a_reader_of_no_chat_finds_no_turn(archive, monkeypatch):
    vector = archive.embedder.embed_query("Quand faut-il arroser les tomates ?")
    asked = _probes(archive, monkeypatch)

    assert nearest_turns(archive, vector, 8, chats=[]) == {}
    assert asked == []


def test_a_period_keeps_what_its_probe_found_unless_the_scope_left_it_short(archive, monkeypatch):
    from core.recall.timeparse import TimeWindow

    garden = archive.embedder.embed_query("Quand faut-il arroser les tomates ?")
    taxes = archive.embedder.embed_query("Quand faut-il rendre la déclaration d'impôts ?")
    # The first four minutes: each chat's first four turns, fewer than the ten asked for.
    window = TimeWindow("between", datetime(2024, 3, 1, 9, 0), datetime(2024, 3, 1, 9, 4))
    inside = {
        r[0]
        for r in archive.db.rows(
            "SELECT id FROM captures WHERE sent_at < ?", ("2024-03-01 09:04:00",)
        )
    }
    asked = _probes(archive, monkeypatch)

    # A reader of every chat: the period is what left the probe short, and it keeps what it
    # found, as the operator's does (the windows and the words find the rest).
    found = nearest_turns(archive, garden, 10, window=window, chats=["garden", "taxes"])
    assert asked == [(10 * PROBE_FACTOR, False, None)]
    assert len(inside) == 8 and found and set(found) <= inside

    # A reader of the garden chat asking about taxes: their chat is what the probe lacked, and
    # the period's four garden turns are searched among.
    del asked[:]
    found = nearest_turns(archive, taxes, 6, window=window, chats=["garden"])
    assert asked == [(6 * PROBE_FACTOR, False, None), (6, True, 4)]
    garden_inside = {
        r[0]
        for r in archive.db.rows(
            "SELECT id FROM captures WHERE chat_id = 'garden' AND sent_at < ?",
            ("2024-03-01 09:04:00",),
        )
    }
    assert len(garden_inside) == 4 and set(found) == garden_inside


@pytest.mark.parametrize(
    ("fetch", "share", "depth"),
    [(160, 1.0, 200), (160, 0.17, 1177), (640, 0.2, 4000), (640, 0.1, 0), (160, 0.0, 0)],
)
def test_a_scope_is_probed_as_deep_as_its_share_needs_up_to_the_limit(fetch, share, depth):
    assert turn_probe._depth(fetch, share) == depth
