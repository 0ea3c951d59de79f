"""When a later statement updates an earlier one, and where the subject's statements stand in
the ranking (core.recall.updates), on real e5 vectors: a cue word alone does not make chatter
an update, another chat's change must name the fact, two statements the question ranks near its
best are one subject, statements found apart are chained, and older statements past the history
shown never come before their current one."""

from datetime import datetime

import numpy as np

from core.recall.turn_search import TurnHit, turn_hits
from core.recall.updates import MAX_HISTORY, _chain, _order, _rerank, _update_score
from core.recall.vocabulary import Vocabulary
from tests.core.memory.helpers import message

CHATTER = [
    "tu fais quoi ce soir ?",
    "je regarde un film, et toi ?",
    "il pleut encore, j'en peux plus",
    "on se fait un resto jeudi ?",
    "missed the bus, running late",
    "I'm at the gym, call you later",
    "j'ai vu Dune hier, franchement pas mal",
    "c'est noté",
]


def _turns(services, said: list[tuple[str, str, datetime]]) -> list[TurnHit]:
    """These messages archived and indexed (real keys and vectors), as turns, in this order."""
    captures = [
        message(str(100 + n), text, when, chat_id=chat) for n, (text, chat, when) in enumerate(said)
    ]
    for n in range(40):  # small talk around them, so that their words are the rare ones
        text = CHATTER[n % len(CHATTER)]
        captures.append(message(str(500 + n), text, datetime(2024, 6, 1, n % 24), chat_id="9"))
    services.archive.store_batch(captures)
    services.archive.index_pending()
    with services.db.session() as session:
        ids = [
            session.connection()
            .exec_driver_sql("SELECT id FROM captures WHERE text = ?", (text,))
            .scalar()
            for text, _, _ in said
        ]
    by_id = {t.capture_id: t for t in turn_hits(services, ids, None)}
    return [by_id[i] for i in ids]


def _query(services, question: str) -> np.ndarray:
    return np.asarray(services.embedder.embed_query(question), dtype=np.float32)


def test_chatter_with_a_cue_word_and_no_value_updates_nothing(services):
    old, chatter = _turns(
        services,
        [
            ("Box internet : Free, identifiant client 88412345", "5", datetime(2024, 9, 10)),
            ("oh no, not the internet box again…", "5", datetime(2024, 11, 25)),
        ],
    )
    question = "Who's my internet provider?"

    score = _update_score(
        services, _query(services, question), old, chatter, lambda: 0.5, True, question
    )

    assert score is None


def test_a_change_in_another_chat_must_name_the_fact(services):
    old, elsewhere = _turns(
        services,
        [
            ("Box internet : Free, identifiant client 88412345", "5", datetime(2024, 9, 10)),
            ("Le client a décalé la livraison de la V1 au 2 décembre", "2", datetime(2024, 11, 4)),
        ],
    )
    question = "C'est quoi mon fournisseur internet ?"

    score = _update_score(
        services, _query(services, question), old, elsewhere, lambda: 0.15, None, question
    )

    assert score is None


def test_two_statements_the_question_ranks_near_its_best_are_one_subject(services):
    old, new = _turns(
        services,
        [
            ("Box internet : Free, identifiant client 88412345", "5", datetime(2024, 9, 10)),
            ("Passée chez Orange pour la fibre, contrat 4471-2290", "5", datetime(2025, 4, 2)),
        ],
    )
    question = "C'est quoi mon fournisseur internet ?"
    qvec = _query(services, question)

    found = _update_score(services, qvec, old, new, lambda: 0.0, None, question, True)
    apart = _update_score(services, qvec, old, new, lambda: 0.0, None, question, False)

    assert found is not None and apart is None


def test_statements_found_apart_are_chained_under_the_newest(services):
    first, moved, pulled = _turns(
        services,
        [
            ("Le client veut la V1 du portail pour le 15 novembre", "2", datetime(2024, 10, 14)),
            ("Le client a décalé la livraison de la V1 au 2 décembre", "2", datetime(2024, 11, 4)),
            (
                "Bad news, the client pulled the V1 delivery forward to November 29",
                "2",
                datetime(2024, 11, 25),
            ),
        ],
    )
    question = "When is the V1 of the portal due?"
    subject = _order([moved, first], 0.5)

    chained = _chain(
        services, Vocabulary(services), question, _query(services, question), [subject],
        [pulled], {first.rowid, moved.rowid, pulled.rowid},
    )  # fmt: skip

    assert [s.current.text for s in chained] == [pulled.text]
    assert [t.text for t in chained[0].older] == [moved.text, first.text]


def test_an_older_statement_past_the_history_never_comes_before_its_current_one():
    def turn(n: int, text: str) -> TurnHit:
        return TurnHit(
            rowid=n, capture_id=f"c{n}", chunk_id=None, surface="telegram", chat_id="5",
            message_id=str(n), speaker="Camille", text=text, sent_at=datetime(2024, n, 1),
            score=1.0 - n / 10,
        )  # fmt: skip

    said = [turn(n, f"Yoga le {day} à 19h") for n, day in enumerate(DAYS, start=1)]
    assert len(said) > MAX_HISTORY + 1
    subject = _order(said, 0.5)

    order, history = _rerank(said, [subject])  # the oldest ranked best

    assert order[0].rowid == said[-1].rowid
    assert len(history[said[-1].rowid]) == MAX_HISTORY


DAYS = ["lundi", "mardi", "mercredi", "jeudi", "vendredi"]
