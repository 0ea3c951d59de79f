"""A turn in words everyone uses ("haha yes exactly", "noted") borrows its key's meaning from
its speaker's name and the turn it answers: a question naming that speaker must still get the
message where something is said about them, not the speaker's fillers."""

from datetime import datetime, timedelta

import pytest

from core.recall.pack import build_pack
from core.recall.vocabulary import Vocabulary
from tests.core.memory.helpers import message

FACT = "900"
FACT_TEXT = "Je t'envoie mon adresse pour la carte : 14 rue Saint-Maur, 75011 Paris"
FILLERS = ["haha yes exactly", "noted", "c'est noté", "pas de souci", "lol 😂", "ok ça marche"]


@pytest.fixture
def chatty_lea(services):
    """Months of fillers from Léa and Camille, and one message where Léa gives her address."""
    day = datetime(2024, 9, 1, 19, 0)
    captures = []
    for n in range(120):
        sender = "Léa Martin" if n % 3 else "Camille Roche"
        text = FILLERS[n % len(FILLERS)]
        captures.append(
            message(str(100 + n), text, day + timedelta(days=2, minutes=n), sender=sender)
        )
        day += timedelta(days=2)
    captures.append(message(FACT, FACT_TEXT, datetime(2024, 10, 1, 21, 10), sender="Léa Martin"))
    services.archive.store_batch(captures)
    services.archive.index_pending()


@pytest.mark.parametrize("question", ["Where does Léa live?", "Elle habite où, Léa ?"])
def test_a_question_naming_a_speaker_gets_what_she_said_before_her_fillers(
    services, chatty_lea, question
):
    pack = build_pack(services, question)

    archive = [i for i in pack.items() if i["source_type"] == "archive"]
    assert archive, "the archive holds the answer"
    assert archive[0]["message_ids"] == [FACT]


def test_fillers_say_less_than_a_fact(services, chatty_lea):
    texts = {1: "haha yes exactly", 2: "noted", 3: FACT_TEXT}

    said = Vocabulary(services).information(texts, enough=3.0)

    assert said[3] == 3.0  # a fact says enough
    assert said[1] < 1.5 and said[2] < 1.0
