"""A question naming someone who speaks in the archive: their own words answer it, the name is
matched on who said a turn, and the replies that only say the name do not crowd them out."""

from datetime import datetime, timedelta

import numpy as np

from core.recall.pack import PackBuilder, build_pack
from core.recall.participants import (
    in_their_words,
    named_speakers,
    speaker_free_vector,
    without_names,
)
from tests.core.memory.helpers import message

# Melanie tells what she did with her kids, session after session, without saying her name
# or "family"; Caroline answers each time with Melanie's name and warm words about family.
SESSIONS = [
    (
        datetime(2023, 5, 8, 18, 0),
        "We took the kids to the science museum yesterday, they loved the dinosaur hall",
        "Oh Melanie, you have such a wonderful family, I love that for you!",
    ),
    (
        datetime(2023, 6, 14, 19, 0),
        "Went camping by the lake with the kids last weekend, we roasted marshmallows",
        "Melanie, your family always looks so happy together, it warms my heart!",
    ),
    (
        datetime(2023, 7, 20, 17, 0),
        "Made clay bowls at a pottery workshop with my son and daughter on Sunday",
        "Aww Melanie, family time with you must be the best, you're such a great mom!",
    ),
    (
        datetime(2023, 8, 28, 20, 0),
        "Spent the whole afternoon swimming at the beach with the kids today",
        "Melanie, I admire how much you love your family, truly inspiring!",
    ),
]


CHATTER = [
    ("Did you catch the game last night?", "Caroline"),
    ("No, I fell asleep early, work was exhausting", "Melanie"),
    ("The new bakery downtown is really good", "Caroline"),
    ("I need to buy a new phone charger", "Melanie"),
    ("It's raining again, what a week", "Caroline"),
]


def _archive(services):
    captures = []
    start = datetime(2023, 4, 1, 12, 0)
    for n in range(30):  # months of small talk around the sessions
        text, sender = CHATTER[n % len(CHATTER)]
        captures.append(message(f"c{n}", text, start + timedelta(days=5 * n), sender=sender))
    for n, (day, said, reply) in enumerate(SESSIONS):
        lines = [
            ("Hey! How have you been lately?", "Caroline"),
            (said, "Melanie"),
            (reply, "Caroline"),
        ]
        for k, (text, sender) in enumerate(lines):
            captures.append(
                message(f"s{n}-{k}", text, day + timedelta(seconds=30 * k), sender=sender)
            )
    services.archive.store_batch(captures)
    services.archive.index_pending()


def test_the_named_speakers_own_statements_come_before_replies_saying_their_name(services):
    _archive(services)

    pack = build_pack(services, "What activities has Melanie done with her family?")

    shown = [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]
    assert set(shown[:4]) == {f"s{n}-1" for n in range(len(SESSIONS))}


def test_only_the_names_of_people_who_speak_in_the_archive_are_taken_out(services):
    _archive(services)

    question = "What did Melanie and Caroline say about Paris?"
    assert named_speakers(services, question, None) == ["Melanie", "Caroline"]
    assert named_speakers(services, question, ["another chat"]) == []
    assert without_names(question, ["Melanie", "Caroline"]) == "What did say about Paris?"
    assert without_names("What is Melanie's job?", ["Melanie"]) == "What is job?"
    assert in_their_words(question, ["Melanie", "Caroline"]) == "What did we say about Paris?"
    assert in_their_words("Where is Melanie's dog?", ["Melanie"]) == "Where is my dog?"
    assert in_their_words("What did Melanie tell Caroline?", ["Melanie", "Caroline"]) == (
        "What did I tell Caroline?"
    )
    assert in_their_words("Quel est le chien de Léa ?", ["Léa"]) == "Quel est le chien de moi ?"


def test_the_search_vector_mixes_the_question_with_and_without_the_speakers(services):
    _archive(services)
    embed = services.embedder.embed_query
    question = "What activities has Melanie done with her family?"
    full = embed(question)

    mixed = speaker_free_vector(services, question, full, None)

    expected = (
        full
        + embed("What activities has done with her family?")
        + embed("What activities has I done with her family?")
    )
    assert np.allclose(mixed, expected / np.linalg.norm(expected), atol=1e-5)
    # No speaker named (Paris is no one here): the question's own vector.
    other = embed("What is there to see in Paris?")
    assert speaker_free_vector(services, "What is there to see in Paris?", other, None) is other
    assert speaker_free_vector(services, question, None, None) is None


def test_the_question_and_its_speakers_words_are_embedded_in_one_engine_call(services, monkeypatch):
    _archive(services)
    inner = services.embedder.inner  # the engine behind the embedding worker
    calls: list[list[str]] = []
    batch, single = inner.embed_queries, inner.embed_query

    def counted_batch(texts):
        calls.append(list(texts))
        return batch(texts)

    def counted_single(text):
        calls.append([text])
        return single(text)

    monkeypatch.setattr(inner, "embed_queries", counted_batch)
    monkeypatch.setattr(inner, "embed_query", counted_single)
    question = "What activities has Melanie done with her family?"

    builder = PackBuilder(services, question)
    builder.build()

    assert calls == [
        [
            question,
            "What activities has done with her family?",
            "What activities has I done with her family?",
        ]
    ]
    # The archive is searched with the vector the speakers' words make, as computed apart.
    apart = speaker_free_vector(services, question, builder.query_vector, None)
    assert np.allclose(builder.searched.query_vector, apart, atol=1e-6)
