"""A question's words find their other forms: "badges" finds "badge", "kids" finds "kid"."""

from datetime import datetime, timedelta

from core.recall.lexical import stem, word_forms
from core.recall.turn_search import search_turns
from tests.core.memory.helpers import message

START = datetime(2025, 3, 3, 9, 0)
CHATTER = [
    "On se voit demain ?",
    "Oui, vers midi.",
    "Tu as pensé au pain ?",
    "Je passe à la boulangerie.",
    "Il pleut encore.",
    "Prends un parapluie.",
]


def _archive(services, said: list[str]) -> None:
    captures = [message(f"c{k}", text, START + timedelta(days=k)) for k, text in enumerate(CHATTER)]
    captures += [
        message(f"s{k}", text, START + timedelta(days=10 + k)) for k, text in enumerate(said)
    ]
    services.archive.store_batch(captures)
    services.archive.index_pending()


def _found(services, question: str) -> list[str]:
    # No query vector: what the words alone find (a pack without embeddings, and the lexical
    # half of every hybrid search).
    return [t.message_id for t in search_turns(services, question, None).turns]


def test_a_plural_in_the_question_finds_the_singular_in_a_message(services):
    _archive(services, ["Mon badge du parking c'est le 3141", "The kid drew a dinosaur"])

    assert _found(services, "Where are my parking badges?")[0] == "s0"
    assert _found(services, "What did the kids draw?")[0] == "s1"


def test_a_verb_finds_its_other_forms_in_french_and_english(services):
    _archive(services, ["We went hiking near the lake", "On a repeint les volets samedi"])

    assert _found(services, "When did we hike?")[0] == "s0"
    assert _found(services, "Quand a-t-on repeint le volet ?")[0] == "s1"


def test_the_word_itself_scores_above_its_other_forms(services):
    _archive(services, ["I painted the fence", "I paint every Sunday"])

    assert _found(services, "Do I paint?")[:2] == ["s1", "s0"]


def test_stems_keep_enough_letters_to_mean_something():
    assert stem("badges") == "badg"
    assert stem("familles") == "famill"
    assert stem("kids") == "kids"  # "kid" is too short a prefix: searched as kid / kids
    assert ("kid", False) in word_forms("kids")
    assert word_forms("career") == [("career", True)]  # -er is no inflection of career
