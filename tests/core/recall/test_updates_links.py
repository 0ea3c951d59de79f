"""Latest value wins when the update is hard to link: it shares no word with the statement it
replaces, it is in the other language than the question, or an old value comes up again after
it (a restatement about someone else). Real archive, real embeddings, months of chatter."""

from datetime import datetime

import pytest

from core.recall.change_cues import has_change_cue, replaces
from core.recall.pack import build_pack
from core.recall.turn_search import TurnHit
from tests.core.recall.history import archive_chat, fact_ids, first_of
from tests.core.recall.packs import archive_order

CHAT = "42"
CHATTER = [
    ("tu fais quoi ce soir ?", "Léa"),
    ("je regarde un film, et toi ?", "Camille"),
    ("il pleut encore, j'en peux plus", "Léa"),
    ("on se fait un resto jeudi ?", "Camille"),
    ("grave, je réserve", "Léa"),
    ("trop de boulot aujourd'hui, la revue de sprint me rend dingue", "Camille"),
    ("tu as des nouvelles de Julien ?", "Léa"),
    ("on a avancé sur la mise en prod, ça prend forme", "Camille"),
    ("missed the bus, running late", "Léa"),
    ("j'ai vu Dune hier, franchement pas mal", "Camille"),
    ("I'm at the gym, call you later", "Léa"),
    ("c'est noté", "Camille"),
]
FACTS = {
    # The provider changes and the update names nothing of the old statement.
    "free": ("Box internet : Free, identifiant client 88412345", datetime(2024, 1, 10, 20, 0)),
    "orange": (
        "Passée chez Orange pour la fibre, contrat 4471-2290",
        datetime(2024, 4, 2, 18, 30),
    ),
    # Stated and changed in English, asked in French.
    "standup": ("Daily standup is at 9:15 on Teams", datetime(2024, 1, 15, 9, 20)),
    "daily": (
        "From Monday the standup is at 9:45, half the team is in Montreal",
        datetime(2024, 3, 11, 9, 50),
    ),
    # Mum's GP retires; later a message names the old doctor again, for someone else.
    "lambert": ("Mon médecin traitant c'est le Dr Lambert, à Caluire", datetime(2024, 1, 20, 10)),
    "nguyen": (
        "Le Dr Lambert prend sa retraite, je suis suivie par le Dr Nguyen à Rillieux",
        datetime(2024, 3, 5, 18, 20),
    ),
    "papa": ("Papa reste chez le Dr Lambert fils, à Caluire", datetime(2024, 4, 20, 11, 0)),
    "croise": (
        "J'ai croisé le Dr Lambert au marché, il a l'air ravi d'être à la retraite",
        datetime(2024, 5, 2, 12, 0),
    ),
    # The contact at Altura changes; afterwards Julie, the old contact's first name, comes up
    # again in a restatement about another company.
    "julie": ("Chez Altura, notre contact c'est Julie Fabre", datetime(2024, 1, 25, 10, 5)),
    "marc": (
        "J'ai eu Marc Lefort au téléphone, c'est lui qui gère notre compte chez Altura maintenant",
        datetime(2024, 3, 20, 16, 20),
    ),
    "novalis": (
        "Chez Novalis, le contact c'est Julie Roussel, pas la même Julie",
        datetime(2024, 4, 25, 11, 0),
    ),
    # A fact that never changed, next to the ones that did.
    "yoga": ("Yoga le jeudi soir à 19h, salle Croix-Rousse", datetime(2024, 2, 1, 20, 0)),
}
IDS = fact_ids(FACTS)
MAMAN_SAID = ("lambert", "nguyen", "papa", "croise")


@pytest.fixture
def history(services):
    archive_chat(
        services, CHAT, CHATTER, FACTS, start=datetime(2024, 1, 3, 19, 0), count=72,
        days_apart=2, sender_of=lambda name: "Maman" if name in MAMAN_SAID else "Camille",
    )  # fmt: skip


def _first_of(order: list[str], *names: str) -> str:
    return first_of(order, IDS, *names)


@pytest.mark.parametrize(
    "question", ["Who's my internet provider?", "C'est quoi mon fournisseur internet ?"]
)
def test_an_update_sharing_no_word_with_the_old_statement_comes_first(services, history, question):
    order = archive_order(build_pack(services, question))

    assert _first_of(order, "free", "orange") == "orange"


def test_an_english_update_answers_a_question_asked_in_french(services, history):
    order = archive_order(build_pack(services, "C'est à quelle heure le daily ?"))

    assert _first_of(order, "standup", "daily") == "daily"


def test_an_old_value_named_again_for_someone_else_does_not_become_current(services, history):
    order = archive_order(build_pack(services, "C'est qui le médecin de Maman ?"))

    assert _first_of(order, "lambert", "nguyen", "papa", "croise") == "nguyen"


@pytest.mark.parametrize(
    "question", ["Who is our contact at Altura?", "Qui est notre contact chez Altura ?"]
)
def test_a_restatement_about_another_company_after_the_change_does_not_become_current(
    services, history, question
):
    order = archive_order(build_pack(services, question))

    assert _first_of(order, "julie", "marc", "novalis") == "marc"


def test_a_fact_that_never_changed_stays_first(services, history):
    pack = build_pack(services, "C'est quand mon cours de yoga ?")

    assert pack.classification.present_state
    assert archive_order(pack)[0] == IDS["yoga"]


@pytest.mark.parametrize(
    "text",
    [
        "From Monday the standup is at 9:45, half the team is in Montreal",
        "Bad news, the client pulled the V1 delivery forward to November 29",
        "Passée chez Orange pour la fibre, contrat 4471-2290",
        "Starting next week the gym opens at 6",
    ],
)
def test_changes_said_in_other_ways_are_cues(text):
    assert has_change_cue(text)


@pytest.mark.parametrize("text", ["Daily standup is at 9:15 on Teams", "il pleut encore à Lyon"])
def test_plain_statements_are_not_cues(text):
    assert not has_change_cue(text)


def _turn(text: str, speaker: str = "Maman") -> TurnHit:
    return TurnHit(1, "a", None, "telegram", CHAT, "1", speaker, text, datetime(2024, 1, 1), 0.0)


def test_a_restatement_replaces_an_old_value_or_is_about_something_else():
    old = _turn("Mon médecin traitant c'est le Dr Lambert, à Caluire")

    assert replaces(old, _turn("Mon médecin traitant c'est le Dr Nguyen, à Rillieux"))
    # Every old value kept, others added: about someone else ("Dr" holds no value).
    assert not replaces(old, _turn("Papa reste chez le Dr Lambert fils, à Caluire"))
