import time
from datetime import datetime, timedelta

import pytest

from core.memory.api import save_memory
from core.recall.pack import build_pack
from core.services import Services
from tests.core.memory.helpers import entry, message
from tests.fakes import BrokenEmbedder

FLAT_TIRE = datetime(2024, 6, 5, 8, 0)  # last week, seen from Saturday 15 June


@pytest.fixture
def archive(services):
    """A few months of one operator's Telegram messages about a bike, food and rent."""
    exchange = [
        message("200", "Le vélo a encore crevé ce matin", FLAT_TIRE),
        message(
            "201",
            "Tu veux que je note de racheter une chambre à air ?",
            FLAT_TIRE + timedelta(minutes=1),
            sender="Elora",
            role="assistant",
        ),
        message("202", "Oui, et une pompe aussi", FLAT_TIRE + timedelta(minutes=2)),
    ]
    singles = [
        message(
            "150", "J'ai enfin réparé le vélo, la chaîne était rouillée", datetime(2024, 5, 10, 9)
        ),
        message("90", "J'ai acheté un nouveau vélo en 2023, un Décathlon", datetime(2023, 9, 1, 8)),
        message("230", "On a mangé des sushis avec Léa", datetime(2024, 6, 14, 20)),
        message("120", "Le loyer à Paris était de 1200 euros", datetime(2024, 4, 2, 10)),
        message("170", "Premier loyer à Lyon payé : 950 euros", datetime(2024, 5, 20, 10)),
    ]
    services.archive.store_batch(exchange + singles)
    services.archive.index_pending()
    return {m.message_id: m for m in exchange + singles}


def _archive_items(pack) -> list[dict]:
    return [item for item in pack.items() if item["source_type"] == "archive"]


def _archived_texts(pack) -> list[str]:
    return [item["text"] for item in _archive_items(pack)]


@pytest.mark.parametrize(
    ("question", "expected", "excluded"),
    [
        ("Qu'est-ce que j'ai dit sur le vélo en mai ?", "réparé le vélo", ["crevé", "Décathlon"]),
        ("What did I say about the bike last week?", "crevé", ["réparé", "Décathlon"]),
        ("Did I buy a bike in 2023?", "Décathlon", ["crevé", "réparé"]),
        ("Qu'est-ce que j'ai mangé hier ?", "sushis", ["vélo"]),
    ],
)
def test_a_named_period_filters_archive_evidence_by_date(
    services, archive, question, expected, excluded
):
    texts = _archived_texts(build_pack(services, question))

    assert any(expected in t for t in texts)
    assert not any(word in t for t in texts for word in excluded)


@pytest.mark.parametrize(
    "question",
    ["Combien je payais de loyer avant le déménagement ?", "How much was my rent before the move?"],
)
def test_before_the_move_is_dated_from_the_move_itself(services, archive, question):
    save_memory(
        services,
        entry(
            "event.move-lyon",
            "Déménagement de Paris à Lyon",
            kind="event",
            topics=["déménagement", "lyon"],
            valid_from=datetime(2024, 5, 3),
            attributes={"event_type": "move"},
        ),
    )

    pack = build_pack(services, question)

    assert pack.time_window.end == datetime(2024, 5, 3)
    texts = _archived_texts(pack)
    assert any("1200 euros" in t for t in texts)
    assert not any("950 euros" in t for t in texts)


def test_an_archive_hit_names_its_chat_speaker_date_and_message(services, archive):
    pack = build_pack(services, "Qu'est-ce que j'ai dit sur le vélo crevé la semaine dernière ?")

    items = _archive_items(pack)
    hit = items[0]  # the message that says it ranks first, on its own
    assert hit["text"] == "Camille: Le vélo a encore crevé ce matin"
    assert hit["kind"] == "message"
    assert hit["chat_id"] == "42"
    assert hit["message_ids"] == ["200"]
    assert hit["speakers"] == ["Camille"]
    assert hit["dates"]["first_at"] == FLAT_TIRE.isoformat()
    assert [(s["message_id"], s["speaker"], s["date"]) for s in hit["sources"]] == [
        ("200", "Camille", FLAT_TIRE.isoformat())
    ]
    assert all(s["surface"] == "telegram" and s["chat_id"] == "42" for s in hit["sources"])
    # The exchange around it is evidence too, each message once, with its own speaker.
    shown = [m for item in items for m in item["message_ids"]]
    assert len(shown) == len(set(shown))
    assert {"201", "202"} <= set(shown)


def test_a_short_single_message_brings_its_neighbours(services):
    start = datetime(2024, 6, 12, 18, 0)
    for n, (sender, text) in enumerate(
        [
            ("Hugo", "On se retrouve chez toi vers 20h ?"),
            ("Hugo", "Tu as pris les clés de la cave ?"),
            ("Camille", "Oui, dans la boîte aux lettres"),
            ("Hugo", "Parfait, merci !"),
        ]
    ):
        services.archive.capture(
            message(
                str(300 + n), text, start + timedelta(minutes=2 * n), chat_id="77", sender=sender
            )
        )

    pack = build_pack(services, "Où sont les clés de la cave ?")

    # The answer is the evidence: it comes first, read with the question it answers.
    hit = _archive_items(pack)[0]
    assert hit["kind"] == "message" and hit["message_ids"] == ["302"]
    assert hit["text"] == "Camille: Oui, dans la boîte aux lettres"
    around = [(n["message_id"], n["speaker"], n["position"]) for n in hit["neighbours"]]
    assert around == [("301", "Hugo", "before")]
    assert hit["neighbours"][0]["text"] == "Tu as pris les clés de la cave ?"
    assert datetime.fromisoformat(hit["neighbours"][0]["date"]) == start + timedelta(minutes=2)


def test_a_question_in_the_pack_brings_its_answer(services):
    start = datetime(2024, 6, 12, 18, 0)
    for n, (sender, text) in enumerate(
        [
            ("Hugo", "C'est quoi le code du portail de la résidence ?"),
            ("Camille", "4512B"),
            ("Hugo", "Merci !"),
        ]
    ):
        services.archive.capture(
            message(str(400 + n), text, start + timedelta(minutes=n), chat_id="77", sender=sender)
        )

    pack = build_pack(services, "Quel est le code du portail de la résidence ?", budget=400)

    items = _archive_items(pack)
    shown = [
        m for i in items for m in i["message_ids"] + [n["message_id"] for n in i["neighbours"]]
    ]
    assert "401" in shown  # the answer is there, as an item or as the question's neighbour
    for item in items:
        if item["message_ids"] == ["400"] and "401" not in [
            m for i in items for m in i["message_ids"]
        ]:
            assert [(n["message_id"], n["position"]) for n in item["neighbours"]] == [
                ("401", "after")
            ]


def test_maintained_entries_come_before_archive_chunks(services, archive):
    save_memory(
        services,
        entry("fact.bike", "Mon vélo est un Riverside 500 acheté chez Décathlon", topics=["vélo"]),
    )

    pack = build_pack(services, "Tu te souviens de ce que j'ai dit sur mon vélo ?")

    kinds = [item["source_type"] for item in pack.layers["L2"].items]
    assert kinds[0] == "entry" and "archive" in kinds
    assert kinds == sorted(kinds, key=lambda k: k != "entry")


@pytest.fixture
def broken(settings, services, archive):
    """The same home, reopened while the embedding model cannot load."""
    save_memory(
        services,
        entry("fact.bike", "Mon vélo est un Riverside 500 acheté chez Décathlon", topics=["vélo"]),
    )
    svc = Services(settings, embedder=BrokenEmbedder(), clock=services.clock)
    yield svc
    svc.close()


def test_without_embeddings_recall_is_lexical_and_says_it_is_degraded(broken):
    pack = build_pack(broken, "Qu'est-ce que j'ai dit sur le vélo en mai ?").to_json()

    assert broken.embedder.calls >= 1  # the model really was asked and failed
    assert pack["degraded"] is True
    assert "embeddings unavailable" in pack["degraded_reason"]
    assert "semantic search unavailable (degraded)" in pack["missing"]
    items = [i for layer in pack["layers"].values() for i in layer["items"]]
    assert "fact.bike" in [i["id"] for i in items]
    archived = [i for i in items if i["source_type"] == "archive"]
    assert [i["text"] for i in archived] == [
        "Camille: J'ai enfin réparé le vélo, la chaîne était rouillée"
    ]  # the June and 2023 bike messages are outside "en mai"
    assert archived[0]["sources"][0]["message_id"] == "150"
    assert datetime.fromisoformat(archived[0]["sources"][0]["date"]) == datetime(2024, 5, 10, 9)


def test_without_embeddings_entries_saved_meanwhile_are_still_recalled(broken):
    save_memory(broken, entry("fact.bike-lock", "Le cadenas du vélo s'ouvre avec la clé rouge"))

    pack = build_pack(broken, "Quelle clé ouvre le cadenas du vélo ?")

    assert pack.degraded
    assert "fact.bike-lock" in pack.item_ids()


@pytest.mark.parametrize(
    ("exact_max", "exact_ratio", "chats"),
    [
        (500, 1, None),  # a small window: its chunks are scored exactly
        (500, 1, ["42"]),
        (500, 10_000, None),  # a large share of a small archive: scored exactly all the same
        (1, 1, None),  # over the cap: counted, then probed unfiltered
        (1, 1, ["42"]),  # over the cap in the reader's chats, most of the archive: probed
    ],
)
def test_a_window_finds_the_same_chunks_whichever_way_it_is_searched(
    services, archive, monkeypatch, exact_max, exact_ratio, chats
):
    from core.recall import archive_search
    from core.recall.timeparse import TimeWindow

    window = TimeWindow("mai-juin 2024", datetime(2024, 5, 1), datetime(2024, 7, 1))
    vector = services.embedder.embed_query("le vélo")
    inside = archive_search._window_ids(services, window, chats, 10_000)
    reference = archive_search._exact(services, vector, 10, inside)
    monkeypatch.setattr(archive_search, "EXACT_MAX", exact_max)
    monkeypatch.setattr(archive_search, "EXACT_RATIO", exact_ratio)

    found = archive_search._nearest(services, vector, 10, window, chats)

    assert reference and set(found) == set(reference)
    assert found == pytest.approx(reference, abs=1e-4)


def test_a_window_between_small_and_most_of_the_archive_is_searched_among_its_ids(
    services, archive, monkeypatch
):
    # Chroma's own filter costs 50-270 ms on a large archive, however little it keeps: the
    # window's indexed chunks are read from the chunks table and searched among directly.
    from core.recall import archive_search
    from core.recall.timeparse import TimeWindow

    window = TimeWindow("mai 2024", datetime(2024, 5, 1), datetime(2024, 6, 1))
    vector = services.embedder.embed_query("le vélo")
    inside = archive_search._window_ids(services, window, None, 10_000)
    every = archive_search._window_ids(services, None, None, 10_000)
    assert len(inside) * 2 < len(every)  # less than half: not probed unfiltered
    reference = archive_search._exact(services, vector, 3, inside)
    asked = []
    query = services.vectors.query
    monkeypatch.setattr(
        services.vectors, "query", lambda *a, **k: asked.append(k.get("among")) or query(*a, **k)
    )
    monkeypatch.setattr(archive_search, "EXACT_MAX", 1)  # every window is over the cap
    started = time.monotonic()

    assert archive_search._nearest(services, vector, 3, window, None) == pytest.approx(reference)
    assert [sorted(a) for a in asked] == [sorted(inside)]

    # A chunk whose vector went from the index before the chunks table knew: the filter.
    asked.clear()
    gone = min(reference, key=reference.get)
    services.vectors.delete("archive", [gone])
    found = archive_search._nearest(services, vector, 3, window, None)
    assert found == pytest.approx({k: v for k, v in reference.items() if k != gone})
    assert services.vectorspace.failure_since(started) is None  # no degraded pack for it

    # A window holding more than AMONG_MAX chunks goes through the filter at once.
    asked.clear()
    monkeypatch.setattr(archive_search, "AMONG_MAX", 1)
    archive_search._nearest(services, vector, 3, window, None)
    assert asked == [None]


def test_a_reader_of_most_chats_is_searched_unfiltered_and_sees_none_of_the_others(
    services, archive, monkeypatch
):
    # Chroma's filter on the reader's chats costs as much as any (50-270 ms on a large
    # archive): a scope holding most of the archive is probed deeper, unfiltered, and the hits
    # of other chats are dropped here.
    from core.recall import archive_search

    services.archive.store_batch(
        [message("1", "Mon vélo a crevé deux fois ce mois-ci", FLAT_TIRE, chat_id="77")]
    )
    services.archive.index_pending()
    theirs = archive_search._window_ids(services, None, ["77"], 10)
    vector = services.embedder.embed_query("le vélo a crevé")
    asked = []
    query = services.vectors.query
    monkeypatch.setattr(
        services.vectors, "query", lambda *a, **k: asked.append(a[3:]) or query(*a, **k)
    )
    monkeypatch.setattr(archive_search, "EXACT_MAX", 1)  # every scope is over the cap
    assert theirs and archive_search._nearest(services, vector, 3, None, None).keys() & theirs

    found = archive_search._nearest(services, vector, 3, None, ["42"])

    mine = archive_search._window_ids(services, None, ["42"], 10_000)
    assert found == pytest.approx(archive_search._exact(services, vector, 3, mine), abs=1e-4)
    assert asked[-1] == ()  # unfiltered: no `where`, no ids to search among


def test_a_small_archive_is_searched_exactly_not_through_the_approximate_index(
    services, archive, monkeypatch
):
    # Chroma's HNSW index misses now and then the best of a few hundred windows that are
    # mostly alike (tests/core/recall/test_updates_found.py failed that way 1 run in 6).
    from core.recall import archive_search

    asked = []
    query = services.vectors.query
    monkeypatch.setattr(
        services.vectors, "query", lambda *a, **k: asked.append(a) or query(*a, **k)
    )
    vector = services.embedder.embed_query("le vélo")
    every = archive_search._window_ids(services, None, None, 10_000)

    found = archive_search._nearest(services, vector, 3, None, None)

    assert found == pytest.approx(archive_search._exact(services, vector, 3, every), abs=1e-6)
    assert asked == []
    monkeypatch.setattr(archive_search, "EXACT_MAX", len(every) - 1)  # one chunk too many
    assert archive_search._nearest(services, vector, 3, None, None)
    assert len(asked) == 1
