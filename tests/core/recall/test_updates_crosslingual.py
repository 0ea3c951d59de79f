"""A fact stated in English, asked about in French (and the other way round): the question is
searched in the archive's other language too (core.recall.crosslingual). Real archive, real
embeddings, months of French small talk around English statements."""

from datetime import datetime, timedelta

import pytest

from core.recall.crosslingual import ENGLISH, FRENCH, language, other_language, translate
from core.recall.pack import build_pack
from core.recall.vocabulary import Vocabulary
from tests.core.memory.helpers import message
from tests.core.recall.packs import archive_order

CHAT = "77"
CHATTER = [
    "tu fais quoi ce soir ?",
    "je regarde un film, et toi ?",
    "il pleut encore, j'en peux plus",
    "on se fait un resto jeudi ?",
    "grave, je réserve",
    "trop de boulot aujourd'hui, la revue de sprint me rend dingue",
    "j'ai vu Dune hier, franchement pas mal",
    "je suis passée au marché, il y avait un monde fou",
    "c'est noté",
    "j'ai acheté un nouveau pull, trop contente",
    "oh non, pas encore les tests utilisateurs…",
    "missed the bus, running late",
]
FACTS = {
    "party": ("Party for my 40th on Saturday May 17 at our place", datetime(2024, 4, 2, 20, 0)),
    "moved": (
        "Party's on Sunday May 18 now, the caterer couldn't do Saturday",
        datetime(2024, 4, 25, 18, 30),
    ),
}
IDS = {name: str(100 + n) for n, name in enumerate(FACTS)}


@pytest.fixture
def history(services):
    day = datetime(2024, 1, 3, 19, 0)
    captures = []
    for n in range(180):  # months of French small talk with Sam around two English statements
        when = day + timedelta(days=n, minutes=n)
        sender = "Sam Taylor" if n % 2 else "Camille"
        text = CHATTER[n % len(CHATTER)]
        captures.append(message(str(500 + n), text, when, sender=sender, chat_id=CHAT))
    for name, (text, when) in FACTS.items():
        captures.append(message(IDS[name], text, when, sender="Sam Taylor", chat_id=CHAT))
    services.archive.store_batch(captures)
    services.archive.index_pending()


def test_a_french_question_finds_the_english_update_first(services, history):
    order = archive_order(build_pack(services, "C'est quand l'anniversaire de Sam ?"))

    found = [m for m in order if m in IDS.values()]
    assert found and found[0] == IDS["moved"]


@pytest.mark.parametrize(
    ("question", "asked", "words"),
    [
        ("C'est quand le club de lecture ?", FRENCH, "when is the book club"),
        ("C'est qui le véto de Pixel ?", FRENCH, "who is the vet of Pixel"),
        ("What's Mum's phone number?", ENGLISH, "maman"),
        ("Where does Léa live?", ENGLISH, "Léa"),
    ],
)
def test_a_question_is_rendered_word_by_word_in_the_other_language(question, asked, words):
    assert language(question) == asked
    assert words in translate(question, asked)


def test_a_question_is_searched_in_another_language_only_when_the_archive_speaks_it(services):
    day = datetime(2024, 1, 3, 19, 0)
    services.archive.store_batch(
        [
            message(str(n), f"we went hiking again on day {n}, the kids loved it", day)
            for n in range(30)
        ]
    )
    services.archive.index_pending()

    assert other_language("Where did we go hiking?", Vocabulary(services)) is None
    assert other_language("On part où en vacances cet été ?", Vocabulary(services)) is not None
    # A question whose words the glossary does not render is not searched in a rendering that
    # would keep only its grammar words.
    assert other_language("On est allés où en randonnée ?", Vocabulary(services)) is None
