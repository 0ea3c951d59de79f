"""An update's word search (core.recall.turn_search.later_by_words) finds exactly the rows of
the filtered BM25 ranking it replaces, ties, scopes and out-of-order imports included (SQLite's
FTS5 path: PostgreSQL keeps the filtered ranking itself)."""

from datetime import datetime, timedelta

import pytest

from core.recall.timeparse import TimeWindow
from core.recall.turn_search import _lexical, later_by_words
from core.storage.fulltext import Match
from tests.core.memory.helpers import message

START = datetime(2024, 1, 1, 9, 0)
# Few distinct texts: most matches tie on BM25, the case where which rows are kept is decided
# by the order rows are ranked in.
TEXTS = [
    "on se voit ce soir pour le badminton",
    "le badminton est reporté à jeudi",
    "badminton",
    "la box internet est chez Free",
    "je passe chez Orange pour la fibre",
    "ce soir je suis crevée",
]


def _archive(services):
    captures = []
    for n in range(240):
        chat = f"c{n % 3}"
        text = TEXTS[n % len(TEXTS)]
        if n % 37 == 0:
            text = "badminton " + "long " * 400  # longer than a turn: never a candidate
        captures.append(message(f"m{n}", text, START + timedelta(hours=7 * n), chat_id=chat))
    services.archive.store_batch(captures)
    # Imported later but older: rowids no longer follow the dates.
    old = [
        message(f"o{n}", TEXTS[n % len(TEXTS)], START - timedelta(days=30 - n), chat_id="c1")
        for n in range(30)
    ]
    services.archive.store_batch(old)


@pytest.mark.sqlite_only
def test_later_messages_by_words_are_those_of_the_filtered_ranking(services):
    _archive(services)
    matches = [
        Match([("badminton", False)]).only("text"),
        Match([("badminton", False), ("soir", False), ("chez", False)]).only("text"),
        Match([("box", False), ("fibre", False), ("orange", False)]).only("text"),
        Match([("introuvable", False)]).only("text"),
    ]
    afters = [START - timedelta(days=40), START - timedelta(days=10), START,
              START + timedelta(days=20), START + timedelta(days=60), START + timedelta(days=69),
              START + timedelta(days=400)]  # fmt: skip
    compared = 0
    with services.db.session() as session:
        conn = session.connection()
        for match in matches:
            for after in afters:
                for chats in (None, ["c1"], ["c0", "c2"], []):
                    for limit in (3, 5, 20, 40):
                        window = TimeWindow("after", after, None)
                        expected = _lexical(conn, match, window, chats, limit)
                        assert later_by_words(conn, match, after, chats, limit) == expected, (
                            match, after, chats, limit,
                        )  # fmt: skip
                        compared += bool(expected)
    assert compared > 100  # most of them find something
