"""Which statement updates which (core.recall.updates), when several could: an old value named
in a negation says a change, a named person's unrelated turns are not one subject because the
question ranks them all near its best, "new" changes only what the statement or the question
names, a value of another kind (a phone number for an address) replaces nothing, and the
statement giving the kind of value asked for is looked at however low small talk ranks it, and
an older statement joins the newer one that most surely updates it, not the newest that says
some change. Real archive, real e5 vectors."""

from datetime import datetime

import numpy as np

from core.recall.change_cues import kinds, rejects
from core.recall.crosslingual import translate
from core.recall.turn_search import TurnHit, turn_hits
from core.recall.updates import _update_score, latest_first
from core.recall.vocabulary import Vocabulary
from tests.core.memory.helpers import message

CHATTER = [
    ("tu fais quoi ce soir ?", "Camille"),
    ("je regarde un film, et toi ?", "Sam"),
    ("il pleut encore, j'en peux plus", "Camille"),
    ("missed the bus, running late", "Sam"),
    ("I'm at the gym, call you later", "Camille"),
    ("j'ai vu Dune hier, franchement pas mal", "Sam"),
    ("c'est noté", "Camille"),
    ("watched Severance last night, pretty good actually", "Sam"),
]


def _turns(services, said: list[tuple[str, str, str, datetime]]) -> list[TurnHit]:
    """These messages (text, chat, sender, when) archived and indexed among small talk, as
    turns, in this order."""
    captures = [
        message(str(100 + n), text, when, chat_id=chat, sender=who)
        for n, (text, chat, who, when) in enumerate(said)
    ]
    for n in range(40):
        text, who = CHATTER[n % len(CHATTER)]
        when = datetime(2024, 6, 1 + n // 24, n % 24)
        captures.append(message(str(500 + n), text, when, chat_id="3", sender=who))
    services.archive.store_batch(captures)
    services.archive.index_pending()
    with services.db.session() as session:
        ids = [
            session.connection()
            .exec_driver_sql("SELECT id FROM captures WHERE text = ?", (text,))
            .scalar()
            for text, *_ in said
        ]
    by_id = {t.capture_id: t for t in turn_hits(services, ids, None)}
    return [by_id[i] for i in ids]


def _query(services, question: str) -> np.ndarray:
    return np.asarray(services.embedder.embed_query(question), dtype=np.float32)


def _shared(services, old: TurnHit, new: TurnHit) -> float:
    return Vocabulary(services).shared(old, [new]).get(new.rowid, 0.0)


def _scored(services, question: str, old: TurnHit, new: TurnHit, qvec=None, found=False):
    """_update_score of a pair as the update search weighs it, with their shared words."""
    qvec = _query(services, question) if qvec is None else qvec
    shared = _shared(services, old, new)
    return _update_score(services, qvec, old, new, lambda: shared, None, question, found)


def test_an_old_value_named_in_a_negation_is_replaced(services):
    old, new = _turns(
        services,
        [
            ("Plombier : M. Garcia, 06 45 12 78 90, très bien", "5", "Camille", datetime(2024, 11, 3)),
            (
                "Plumber: Ahmed Benaissa 07 12 45 88 01, Garcia doesn't come out to Villeurbanne",
                "5", "Camille", datetime(2025, 2, 26),
            ),
        ],
    )  # fmt: skip
    question = "C'est qui mon plombier ?"

    assert rejects(old, new)
    score = _scored(services, question, old, new)

    assert score is not None


def test_a_negation_that_names_no_old_value_rejects_nothing(services):
    old, new, other = _turns(
        services,
        [
            ("Chez Altura, notre contact c'est Julie Fabre", "2", "Hugo", datetime(2024, 10, 2)),
            ("j'ai vu Dune hier, franchement pas mal", "2", "Hugo", datetime(2024, 12, 1)),
            (
                "Chez Novalis, le contact c'est Julie Roussel, pas la même Julie",
                "2", "Hugo", datetime(2025, 2, 11),
            ),
        ],
    )  # fmt: skip
    question = "Qui est notre contact chez Altura ?"

    assert not rejects(old, new)  # "pas mal" negates nothing of Julie Fabre's
    assert rejects(old, other)  # "pas la même Julie"…
    # Julie is negated, but for another company than the one asked about.
    score = _scored(services, question, old, other)
    assert score is None


def test_a_named_persons_unrelated_turns_are_not_one_subject(services):
    # The question names Sam: every turn of Sam's ranks near its best and "answers" it by the
    # name; a later turn with a cue word ("from now on") is no update of the dog's name.
    dog, visit = _turns(
        services,
        [
            ("Our dog is called Biscuit, he's a very silly beagle", "3", "Sam", datetime(2024, 10, 2)),
            (
                "Use sam@taylordesigns.co.uk from now on, I'm closing the gmail",
                "3", "Sam", datetime(2025, 3, 16),
            ),
        ],
    )  # fmt: skip
    question = "Comment s'appelle le chien de Sam ?"
    # As latest_first reads it: the question and its English rendering (crosslingual).
    qvec = np.stack([_query(services, question), _query(services, translate(question, "fr"))])

    score = _scored(services, question, dog, visit, qvec, found=True)

    assert score is None


def test_something_new_is_a_change_only_of_what_the_statement_or_question_names(services):
    plan, series, office, offices = _turns(
        services,
        [
            (
                "Plus de Corse, trop cher au final : Bretagne du 12 au 26 juillet, à Perros-Guirec",
                "1", "Léa", datetime(2025, 5, 2),
            ),
            ("j'ai vu la nouvelle saison de The Bear hier, franchement pas mal", "1", "Léa",
             datetime(2025, 5, 15)),
            ("Bureau : 12 quai Perrache, 2e étage", "5", "Camille", datetime(2024, 9, 4)),
            ("Nouveaux bureaux à partir d'avril : 40 cours Lafayette, 3e étage", "5", "Camille",
             datetime(2025, 3, 31)),
        ],
    )  # fmt: skip
    question = "Léa part où cet été ?"
    qvec = np.stack([_query(services, question), _query(services, translate(question, "fr"))])

    # A new season of a series changes nothing of Léa's summer, though both are hers.
    assert _update_score(services, qvec, plan, series, lambda: 0.0, None, question, True) is None
    question = "C'est quoi l'adresse du bureau ?"
    moved = _scored(services, question, office, offices)
    assert moved is not None


def test_a_value_of_another_kind_replaces_nothing(services):
    address, phone, moved = _turns(
        services,
        [
            (
                "Je t'envoie mon adresse pour la carte d'anniversaire : 14 rue Saint-Maur, 75011 Paris",
                "1", "Léa", datetime(2024, 10, 1),
            ),
            ("Note mon nouveau numéro : 07 58 21 64 30, l'ancien ne marche plus", "1", "Léa",
             datetime(2025, 1, 15)),
            ("J'ai signé le bail ! Je m'installe au 3 place Bellecour à Lyon fin mars", "1", "Léa",
             datetime(2025, 3, 20)),
        ],
    )  # fmt: skip
    question = "Where does Léa live?"
    qvec = np.stack([_query(services, question), _query(services, translate(question, "en"))])

    # A phone number says a change, and is as close to an address as a new address is.
    assert kinds(phone.text) == {"phone"} and kinds(address.text) == {"address"}
    assert _update_score(services, qvec, address, phone, lambda: 0.0, None, question, True) is None
    assert _update_score(services, qvec, address, moved, lambda: 0.0, None, question, True)


def test_a_negation_far_from_a_named_value_rejects_nothing(services):
    # People name each other in every turn ("Thanks, Gina!"): a negation elsewhere in the
    # message says nothing of what was said to them before.
    said, thanks = _turns(
        services,
        [
            ("Thanks, Gina. Still working on opening a dance studio.", "7", "Jon",
             datetime(2023, 6, 1)),
            ("Thanks, Gina! Your words keep me motivated, I can't wait to open the studio", "7",
             "Jon", datetime(2023, 7, 1)),
        ],
    )  # fmt: skip

    assert not rejects(said, thanks)


def test_a_statement_of_the_kind_asked_for_is_looked_at_below_the_small_talk(services):
    # "Where does Sam live?" ranks Sam's small talk first (the name); the address he gave
    # ranks below it, and his move, which shares no word with it, is not ranked at all.
    *small_talk, flat, moved = _turns(
        services,
        [
            ("watched The Bear last night, pretty good actually", "3", "Sam",
             datetime(2025, 5, 3)),
            ("swamped today, the quarterly deck is driving me mad", "3", "Sam",
             datetime(2025, 3, 11)),
            ("lovely weather in Lyon today", "3", "Sam", datetime(2025, 4, 27)),
            ("My new flat is at 22 Carver Street, Sheffield, come visit!", "3", "Sam",
             datetime(2024, 9, 5)),
            ("Moved again! We're at 5 Abbey Road, Bristol", "3", "Sam", datetime(2025, 1, 28)),
        ],
    )  # fmt: skip
    question = "Where does Sam live?"
    for turn, score in zip([*small_talk, flat], [0.62, 0.6, 0.58, 0.45], strict=True):
        turn.score = score

    turns, history = latest_first(
        services, question, _query(services, question), [*small_talk, flat], None
    )

    order = [t.rowid for t in turns]
    assert moved.rowid in order and flat.rowid not in order[: order.index(moved.rowid)]
    assert [t.rowid for t in history[moved.rowid]] == [flat.rowid]


def test_an_older_statement_joins_the_newer_one_that_surely_updates_it(services):
    from core.recall.updates import _linked

    porto, edinburgh, cornwall = _turns(
        services,
        [
            ("For the summer we booked a week in Porto in July", "3", "Camille", datetime(2024, 11, 20)),
            ("We cancelled Porto, it's Edinburgh in August instead", "3", "Camille", datetime(2025, 3, 1)),
            # Newer, says a change too ("again"), but of Sam's own summer.
            ("We're doing Cornwall again this summer, can't beat it", "3", "Sam", datetime(2025, 3, 2)),
        ],
    )  # fmt: skip
    question = "Where are we going on holiday this summer?"
    qvec = _query(services, question)
    for turn in (porto, edinburgh, cornwall):
        turn.score = services.embedder.calibrate(float(qvec @ turn.vector))

    groups = _linked(services, Vocabulary(services), question, qvec, [porto, edinburgh, cornwall])

    subject = next(g for g in groups if porto in g)
    assert edinburgh in subject and cornwall not in subject
