"""Each archived message gets a turn key when its chunk is embedded: the turn it answers, the
dates it names, a vector of its own (SQLite and the `turns` collection); forgetting takes them."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from core.archive.records import CaptureIn
from core.archive.turns import blob_vector
from core.memory.api import save_memory
from core.memory.forget import forget_entry
from tests.core.memory.helpers import entry, message, source_of
from tests.databases import search

T0 = datetime(2024, 6, 12, 18, 0)


def _keys(services) -> dict[str, tuple]:
    with services.db.session() as session:
        rows = (
            session.connection()
            .exec_driver_sql(
                "SELECT c.message_id, ctx.message_id, k.dates, k.vector, k.chunk_rowid "
                "FROM turn_keys k JOIN captures c ON c.rowid = k.capture_rowid "
                "LEFT JOIN captures ctx ON ctx.rowid = k.context_rowid"
            )
            .all()
        )
    return {r[0]: r[1:] for r in rows}


def test_a_message_is_read_with_the_one_it_answers_within_a_conversation(services):
    services.archive.store_batch(
        [
            message("1", "Tu as pris les clés de la cave ?", T0, sender="Hugo"),
            message("2", "Oui, dans la boîte aux lettres", T0 + timedelta(minutes=1)),
            message("3", "On se voit demain ?", T0 + timedelta(hours=5), sender="Hugo"),
        ]
    )
    services.archive.index_pending()

    keys = _keys(services)
    assert keys["1"][0] is None  # nothing before it
    assert keys["2"][0] == "1"  # the answer is read with its question
    assert keys["3"][0] is None  # five hours later: a new conversation
    assert (
        keys["3"][1]
        == '[{"phrase": "demain", "date": "2024-06-13", "start": "2024-06-13", "end": "2024-06-14"}]'
    )
    assert all(k[2] is not None for k in keys.values())
    assert services.vectors.count("turns") == 3


def test_an_explicit_reply_is_read_with_the_message_it_replies_to(services):
    first = message("10", "Le code du portail c'est 4512B", T0)
    later = CaptureIn(
        surface="telegram", chat_id="42", message_id="11", text="Merci, noté !",
        sent_at=T0 + timedelta(days=2), sender="Hugo", reply_to="10",
    )  # fmt: skip
    services.archive.store_batch([first, later])
    services.archive.index_pending()

    assert _keys(services)["11"][0] == "10"  # two days later, but a reply


def test_a_windows_vector_is_the_mean_of_its_messages(services):
    services.archive.store_batch(
        [
            message("1", "On part à Lyon samedi", T0),
            message("2", "Super, je prends le train de 9h", T0 + timedelta(minutes=1)),
        ]
    )
    services.archive.index_pending()

    keys = _keys(services)
    assert keys["1"][3] == keys["2"][3]  # one window
    with services.db.session() as session:
        chunk_id = (
            session.connection()
            .exec_driver_sql("SELECT id FROM chunks WHERE rowid = ?", (keys["1"][3],))
            .scalar_one()
        )
    window = np.asarray(services.vectors.get_vectors("archive", [chunk_id])[chunk_id])
    mean = blob_vector(keys["1"][2]) + blob_vector(keys["2"][2])
    assert float(window @ (mean / np.linalg.norm(mean))) > 0.999


def test_forgetting_a_message_takes_its_key_and_rereads_the_one_that_answered_it(services):
    question = message("1", "Le code du casier c'est 4711-ZEBRA ?", T0, sender="Hugo")
    answer = message("2", "Oui c'est ça", T0 + timedelta(minutes=1))
    services.archive.store_batch([question, answer])
    services.archive.index_pending()
    save_memory(
        services, entry("fact.casier", "Code casier 4711-ZEBRA", sources=[source_of(question)])
    )

    forget_entry(services, "fact.casier", with_sources=True)

    keys = _keys(services)
    assert "1" not in keys
    assert keys["2"][0] is None  # no longer read with the forgotten message
    assert keys["2"][2] is not None  # and embedded again without it
    assert search(services, "turn_keys", ["zebra"]) == []
    assert question.id not in services.vectors.get_vectors("turns", [question.id, answer.id])
    assert answer.id in services.vectors.get_vectors("turns", [question.id, answer.id])
