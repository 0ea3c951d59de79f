"""Questions whose answer is spread over several sessions gather evidence from each."""

from datetime import datetime, timedelta

import pytest

from core.recall.classifier import asks_aggregate, classify
from core.recall.lexical import fold
from core.recall.pack import build_pack
from tests.core.memory.helpers import NOW, message

SESSIONS = [
    # (day, the statement about an activity with church friends, the talk around it)
    (
        datetime(2023, 3, 4, 18, 0),
        ("m1", "I went on a hike with my church friends on Saturday, the view was amazing"),
        ["How was your week?", "Busy at work, but good.", "Any plans for spring?"],
    ),
    (
        datetime(2023, 4, 12, 19, 0),
        ("m2", "My church friends and I volunteered at the soup kitchen last night"),
        ["Did you see the game?", "No, I was out.", "Too bad, it was great."],
    ),
    (
        datetime(2023, 5, 20, 17, 0),
        ("m3", "We had a picnic by the lake with the church group, so relaxing"),
        ["The weather is finally nice.", "I know, I went running.", "Good for you!"],
    ),
    (
        datetime(2023, 6, 28, 20, 0),
        ("m4", "Went camping for the weekend with friends from church, we sang by the fire"),
        ["How is your mom?", "Better, thanks.", "Glad to hear it."],
    ),
]


def test_evidence_comes_from_every_session_not_near_duplicates_of_one(services):
    captures = []
    n = 0
    for day, (mid, statement), talk in SESSIONS:
        lines = [*talk[:2], statement, talk[2]]
        for k, text in enumerate(lines):
            sender = "Maria" if k % 2 == 0 or text == statement else "John"
            msg_id = mid if text == statement else f"t{n}"
            captures.append(message(msg_id, text, day + timedelta(seconds=30 * k), sender=sender))
            n += 1
    # Church comes up again and again without any activity: near-duplicates, each in its own
    # conversation, that must not crowd out the sessions holding the answer.
    for k, text in enumerate(
        [
            "Church friends are the best, honestly",
            "My church friends always cheer me up",
            "I love spending time with my church friends",
            "Church on Sunday with friends was lovely",
            "My friends from church called me today",
            "The people at church are such good friends",
            "I feel at home with my church friends",
            "Talking to my church friends helps so much",
        ]
    ):
        day = datetime(2023, 7, 2, 18, 0) + timedelta(days=4 * k)
        captures.append(message(f"d{k}", text, day, sender="Maria"))
        captures.append(message(f"r{k}", "That's nice to hear", day + timedelta(seconds=40)))
    services.archive.store_batch(captures)
    services.archive.index_pending()

    pack = build_pack(services, "What activities has Maria done with her church friends?")

    shown = [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]
    assert len(shown) == len(set(shown))  # never a message twice
    assert {"m1", "m2", "m3", "m4"} <= set(shown)


STATEMENTS = [
    "I went on a hike with my church friends on Saturday, the view was amazing",
    "My church friends and I volunteered at the soup kitchen last night",
    "We had a picnic by the lake with my church friends, so relaxing",
    "Went camping for the weekend with my church friends, we sang by the fire",
]


def test_what_the_named_person_did_comes_before_the_other_speakers_reactions(services):
    # Each session: Maria says what she did with her church friends; John answers with the
    # question's own words, and says nothing about what she did.
    reactions = [
        "Wow Maria, your church friends sound like so much fun, what a great activity!",
        "Maria, doing things with your church friends is always such a great activity!",
        "Your church friends again, Maria! Love these activities with them!",
        "So many activities with your church friends, Maria, that's wonderful!",
    ]
    captures = []
    for (day, (mid, _), talk), statement, reaction in zip(
        SESSIONS, STATEMENTS, reactions, strict=True
    ):
        lines = [(talk[0], "John"), (talk[1], "Maria"), (statement, "Maria"), (reaction, "John")]
        for k, (text, sender) in enumerate(lines):
            msg_id = mid if text == statement else f"{mid}-{k}"
            captures.append(message(msg_id, text, day + timedelta(seconds=30 * k), sender=sender))
    services.archive.store_batch(captures)
    services.archive.index_pending()

    pack = build_pack(services, "What activities has Maria done with her church friends?")

    first = [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]
    print(
        [
            (i["message_ids"], round(i["score"], 3), i["text"][:40])
            for i in pack.items()
            if i["source_type"] == "archive"
        ]
    )
    assert set(first[:4]) == {"m1", "m2", "m3", "m4"}


@pytest.mark.parametrize(
    "question",
    [
        "What activities has Maria done with her church friends?",
        "Which cities has Jon visited?",
        "What books does Melanie read?",
        "What do Jon and Gina both have in common?",
        "How many times has Melanie gone to the beach?",
        "How many weeks passed between Maria adopting Coco and Shadow?",
        "Qu'est-ce que Léa et Hugo ont en commun ?",
        "Combien de fois Sam est venu à Lyon ?",
    ],
)
def test_a_question_gathering_several_statements_is_not_about_the_latest_one(question):
    # A list, a count or a comparison needs every mention: the latest does not replace them.
    assert asks_aggregate(fold(question))
    assert not classify(question, NOW).present_state


@pytest.mark.parametrize(
    "question",
    [
        "What's Léa's phone number?",
        "Where does Sam live?",
        "Which parking spot is mine?",
        "What food does Pixel eat?",
        "Pixel mange quelles croquettes ?",
        "C'est quand le repas de Noël chez Maman ?",
    ],
)
def test_a_question_about_one_current_value_stays_present_state(question):
    assert not asks_aggregate(fold(question))
    assert classify(question, NOW).present_state
