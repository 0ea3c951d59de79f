"""Which statement an update belongs to (core.recall.updates): a change that names the old
value is about its fact in any words or language, and a later message naming more of another
earlier statement's values is that statement's update, not the one the question found.
Real archive, real e5 vectors, months of French and English small talk around the facts."""

from datetime import datetime

import numpy as np
import pytest

from core.recall import updates
from core.recall.pack import build_pack
from core.recall.turn_search import turn_hits
from core.recall.updates import _update_score
from core.recall.vocabulary import Vocabulary
from tests.core.recall.history import archive_chat, fact_ids, first_of
from tests.core.recall.packs import archive_order

CHAT = "42"
CHATTER = [
    ("tu fais quoi ce soir ?", "Hugo"),
    ("trop de boulot aujourd'hui, la revue de sprint me rend dingue", "Camille"),
    ("on se fait un resto jeudi ?", "Hugo"),
    ("j'ai vu Dune hier, franchement pas mal", "Camille"),
    ("missed the bus, running late", "Hugo"),
    ("c'est noté", "Camille"),
    ("il pleut encore, j'en peux plus", "Hugo"),
    ("on a avancé sur la maquette, ça prend forme", "Camille"),
    ("grabbing a coffee, want one?", "Hugo"),
    ("je suis passée au marché, il y avait un monde fou", "Camille"),
]
FACTS = {
    "nadia": (
        "Pour les congés tu vois avec Nadia Benali, c'est elle notre manager",
        datetime(2024, 9, 16, 12, 10),
    ),
    "julie": ("Chez Altura, notre contact c'est Julie Fabre", datetime(2024, 10, 2, 10, 5)),
    "thomas": (
        "Thomas Girard takes over the team on Monday, Nadia is off to the Paris office",
        datetime(2025, 2, 10, 17, 30),
    ),
    "marc": (
        "J'ai eu Marc Lefort au téléphone, c'est lui qui gère notre compte chez Altura maintenant",
        datetime(2025, 4, 1, 16, 20),
    ),
}
IDS = fact_ids(FACTS)


@pytest.fixture
def history(services):
    # Months of small talk with Hugo around the facts (enough that a name said twice is rare).
    archive_chat(
        services, CHAT, CHATTER, FACTS, start=datetime(2024, 9, 2, 9, 0), count=240,
        days_apart=1, sender_of=lambda name: "Hugo",
    )  # fmt: skip


def _turn(services, name: str):
    with services.db.session() as session:
        capture = (
            session.connection()
            .exec_driver_sql("SELECT id FROM captures WHERE message_id = ?", (IDS[name],))
            .scalar()
        )
    return turn_hits(services, [capture], None)[0]


def test_a_change_naming_the_old_value_is_about_its_fact_in_another_language(services, history):
    question = "Who's my manager?"
    qvec = np.asarray(services.embedder.embed_query(question), dtype=np.float32)
    old, new = _turn(services, "nadia"), _turn(services, "thomas")
    words = Vocabulary(services).shared(old, [new]).get(new.rowid, 0.0)

    assert _update_score(services, qvec, old, new, lambda: words, question=question) is not None
    assert updates._hands_over(old, new, question)
    # Naming what the question names is no hand-over: "Nadia" asked about is the subject.
    assert not updates._hands_over(old, new, "Who is Nadia Benali?")


@pytest.mark.parametrize("question", ["Who's my manager?", "C'est qui mon manager ?"])
def test_the_update_of_another_statement_is_not_taken_for_the_one_asked_about(
    services, history, question
):
    order = archive_order(build_pack(services, question))

    # "c'est lui qui gère notre compte chez Altura maintenant" is close to a manager, but it
    # updates Altura's contact; Thomas taking over from Nadia is the manager's update.
    assert first_of(order, IDS, "nadia", "thomas", "marc") == "thomas"


def test_a_successor_claimed_by_another_statement_is_checked_against_it(services, history):
    vocabulary = Vocabulary(services)
    nadia, julie = _turn(services, "nadia"), _turn(services, "julie")
    marc, thomas = _turn(services, "marc"), _turn(services, "thomas")

    assert updates._updates_another(services, vocabulary, nadia, marc)
    # The statement it does update has no other owner for it, nor has Nadia's successor.
    assert not updates._updates_another(services, vocabulary, julie, marc)
    assert not updates._updates_another(services, vocabulary, nadia, thomas)
