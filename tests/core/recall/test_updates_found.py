"""Latest value wins only if the statements are found at all: a present-state question finds a
fact said once among months of a person's short replies (whose keys borrow the turn they
answer), and links an update that shares no word with the statement it replaces but is ranked
near it. Real archive, real embeddings."""

from datetime import datetime, timedelta

import pytest

from core.recall.pack import build_pack
from core.recall.turn_search import TurnHit
from core.recall.updates import latest_first
from tests.core.memory.helpers import message
from tests.core.recall.packs import archive_order

CHAT = "77"
# Short replies say little themselves: their keys borrow the question they answer, and the
# name of who said them; there are many of them, as in any long chat.
REPLIES = [
    "haha yes exactly",
    "noted",
    "sounds good",
    "lol 😂",
    "amazing!!",
    "on my way",
    "ok cool",
    "sure, why not",
]
ASKS = [
    "what are you up to on Saturday?",
    "fancy a curry tonight?",
    "did you watch the match yesterday?",
    "how was the weekend?",
    "are you coming to the quiz on Thursday?",
    "shall we get coffee near the station?",
    "seen the new Wes Anderson film?",
    "can you send me the photos from the trip?",
    "any plans for the bank holiday?",
    "did your parcel arrive in the end?",
    "want to try the new ramen place?",
    "how is your sister doing?",
]
FACTS = {
    # Said once, by the person the question names, in words the question does not use.
    "museum": (
        "Started at the Natural History Museum on Monday, I look after the fossil collection",
        datetime(2024, 6, 3, 18, 40),
        "Sam",
    ),
    # A locker number, then new lockers: the update shares no word with the old statement
    # (only another form of one), and does not stand out in the chat.
    "locker": ("Ton casier au vestiaire c'est le 31", datetime(2024, 2, 5, 12, 0), "Camille"),
    "lockers": (
        "Les casiers ont été refaits cet été, le tien est le 58",
        datetime(2024, 9, 9, 12, 30),
        "Camille",
    ),
    # Where Sam lives, then a move: said in other words, ranked below the old address.
    "flat": ("My flat is at 14 Mill Lane in Leeds, top floor", datetime(2024, 3, 4, 20, 0), "Sam"),
    "house": (
        "Moving day done! We're renting a little house on Elm Grove in York now",
        datetime(2024, 8, 19, 21, 0),
        "Sam",
    ),
}
# Other numbers given in the chat after the change: the update does not stand out among them.
NUMBERS = [
    "Le digicode de la salle de sport c'est 4512",
    "Ta place de parking c'est la 12 au sous-sol",
    "La salle de réunion du jeudi c'est la 204",
    "Le code wifi de la médiathèque c'est biblio2024",
    "Ton numéro de dossard pour la course c'est le 1187",
    "Le vestiaire des filles c'est la porte B",
    "La réservation du resto est au nom de Camille, table 9",
    "Le numéro de suivi du colis c'est 8L0042",
]
IDS = {name: str(100 + n) for n, name in enumerate(FACTS)}


@pytest.fixture
def long_chat(services):
    """Ten months of a chat with Sam: a question, a short reply, now and then a fact."""
    day = datetime(2024, 1, 2, 19, 0)
    captures = []
    for n in range(330):
        when = day + timedelta(days=n, minutes=n % 50)
        captures.append(
            message(str(1000 + 2 * n), ASKS[n % len(ASKS)], when, sender="Camille", chat_id=CHAT)
        )
        reply = REPLIES[n % len(REPLIES)]
        later = when + timedelta(minutes=2)
        captures.append(message(str(1001 + 2 * n), reply, later, sender="Sam", chat_id=CHAT))
    for n, text in enumerate(NUMBERS):
        when = datetime(2024, 9, 20, 12, 0) + timedelta(days=5 * n)
        captures.append(message(str(200 + n), text, when, sender="Camille", chat_id=CHAT))
    for name, (text, when, sender) in FACTS.items():
        captures.append(message(IDS[name], text, when, sender=sender, chat_id=CHAT))
    services.archive.store_batch(captures)
    services.archive.index_pending()


@pytest.mark.parametrize("question", ["Where does Sam work?", "What is Sam's job?"])
def test_a_fact_said_once_comes_before_short_replies_that_borrow_their_meaning(
    services, long_chat, question
):
    pack = build_pack(services, question)

    assert pack.classification.present_state
    assert archive_order(pack)[0] == IDS["museum"]


def test_an_update_sharing_no_word_but_ranked_near_the_old_statement_comes_first(
    services, long_chat
):
    order = archive_order(build_pack(services, "C'est quoi le numéro de mon casier ?"))

    assert IDS["lockers"] in order
    assert order.index(IDS["lockers"]) < order.index(IDS["locker"])


@pytest.mark.parametrize("question", ["Where does Sam live?", "Il habite où, Sam ?"])
def test_a_move_ranked_below_the_old_address_comes_first(services, long_chat, question):
    order = archive_order(build_pack(services, question))

    assert IDS["house"] in order
    assert order.index(IDS["house"]) < order.index(IDS["flat"])


def _hit(services, rowid: int, text: str, when: datetime, score: float) -> TurnHit:
    vector = services.embedder.embed_passages([f"Camille: {text}"])[0]
    return TurnHit(
        rowid=rowid, capture_id=f"c{rowid}", chunk_id=None, surface="telegram", chat_id=CHAT,
        message_id=str(rowid), speaker="Camille", text=text, sent_at=when, score=score,
        vector=vector,
    )  # fmt: skip


def test_two_ranked_statements_below_the_anchors_are_linked_the_newer_first(services):
    # The best-ranked turns are small talk: the statement and its update rank below them, the
    # old one higher. Nothing is archived, so no successor can be searched: the two are linked
    # as the question ranked them.
    question = "C'est quoi l'adresse du bureau ?"
    ranked = [
        _hit(services, 1, "on se fait un resto près du bureau jeudi ?", datetime(2024, 5, 2), 0.9),
        _hit(services, 2, "je suis au bureau, je t'appelle après", datetime(2024, 6, 2), 0.89),
        _hit(services, 3, "trop de boulot au bureau aujourd'hui", datetime(2024, 7, 2), 0.88),
        _hit(services, 4, "Bureau : 8 rue Garibaldi, 4e étage", datetime(2024, 1, 8), 0.75),
        _hit(
            services,
            5,
            "Nouveaux bureaux à partir de mars : 21 avenue Thiers, 2e étage",
            datetime(2024, 2, 20),
            0.65,
        ),
    ]
    qvec = services.embedder.embed_query(question)

    turns, history = latest_first(services, question, qvec, ranked, None)

    order = [t.rowid for t in turns]
    assert 5 in order and (4 not in order or order.index(5) < order.index(4))
    assert [t.rowid for t in history[5]] == [4]
