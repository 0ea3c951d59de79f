"""Latest value wins: a present-state question gets the newest statement first, older ones as
dated history, in French and English, from the archive and from entries."""

from datetime import datetime, timedelta

import numpy as np
import pytest

from core.memory.api import save_memory
from core.prompts import render
from core.recall.classifier import classify
from core.recall.pack import build_pack
from core.recall.turn_search import TurnHit
from core.recall.updates import RELEVANT, _update_score
from tests.core.memory.helpers import NOW, entry, message

OLD, NEW, MENTION = "100", "200", "300"


@pytest.fixture
def vet_history(services):
    """Pixel's vet, stated in January, changed in April, the old clinic mentioned in May."""
    chatter = [
        ("tu fais quoi ce soir ?", "Léa"),
        ("je regarde un film, et toi ?", "Camille"),
        ("il pleut encore, j'en peux plus", "Léa"),
        ("on se fait un resto jeudi ?", "Camille"),
        ("grave, je réserve", "Léa"),
    ]
    day = datetime(2024, 1, 3, 19, 0)
    captures = []
    for n in range(40):  # months of small talk around the facts
        text, sender = chatter[n % len(chatter)]
        captures.append(
            message(str(500 + n), text, day + timedelta(days=3 * n), sender=sender, chat_id="42")
        )
    captures += [
        message(
            OLD,
            "Pixel est suivi à la clinique vétérinaire des Brotteaux depuis qu'il est chaton",
            datetime(2024, 1, 10, 18, 30),
        ),
        message(
            NEW,
            "On a changé de véto pour Pixel : c'est le Dr Morel à Villeurbanne maintenant",
            datetime(2024, 4, 2, 19, 0),
        ),
        message(
            MENTION,
            "Je suis passée devant la clinique des Brotteaux ce matin, ça m'a fait penser à Pixel",
            datetime(2024, 5, 20, 8, 15),
            sender="Léa",
        ),
        message(
            "400",
            "Moka, le chat de Léa, va à la clinique du Tonkin",
            datetime(2024, 3, 1, 20, 0),
            sender="Léa",
        ),
    ]
    services.archive.store_batch(captures)
    services.archive.index_pending()


def _archive(pack) -> list[dict]:
    return [i for i in pack.items() if i["source_type"] == "archive"]


@pytest.mark.parametrize("question", ["C'est qui le véto de Pixel ?", "Who is Pixel's vet?"])
def test_the_newest_statement_comes_first_and_the_old_one_is_dated_history(
    services, vet_history, question
):
    pack = build_pack(services, question)

    assert pack.classification.present_state
    first = _archive(pack)[0]
    assert first["message_ids"] == [NEW]
    assert first["current"] is True
    history = {h["message_id"]: h for h in first["history"]}
    assert history[OLD]["status"] == "superseded"
    assert history[OLD]["date"] == "2024-01-10T18:30:00"
    assert history[OLD]["valid_to"] == "2024-04-02T19:00:00"
    assert history[OLD]["chat_id"] == "42"
    # The old value is shown once, as history, never ahead of the current one.
    shown = [m for i in _archive(pack) for m in i["message_ids"]]
    assert OLD not in shown


def test_an_old_value_mentioned_after_the_change_does_not_become_current(services, vet_history):
    pack = build_pack(services, "C'est qui le véto de Pixel ?")

    order = [m for i in _archive(pack) for m in i["message_ids"]]
    assert order[0] == NEW
    assert MENTION not in order[:1]


def test_a_question_about_the_past_keeps_the_plain_ranking(services, vet_history):
    question = "Quel était le véto de Pixel avant ?"
    assert not classify(question, NOW).present_state

    pack = build_pack(services, question)

    assert not any(i.get("current") for i in _archive(pack))


def test_the_prompt_shows_the_history_as_dated_and_older(services, vet_history):
    pack = build_pack(services, "Who is Pixel's vet?")

    text = render("evidence", pack=pack.to_json())

    assert "Dr Morel" in text
    older = next(line for line in text.splitlines() if "Brotteaux depuis" in line)
    assert "older, superseded, said 2024-01-10, until 2024-04-02" in older
    assert text.index("Dr Morel") < text.index("Brotteaux depuis")


def test_an_entry_superseded_by_a_newer_one_is_its_history(services):
    old = save_memory(
        services,
        entry("fact.vet-pixel", "Le véto de Pixel est la clinique des Brotteaux", topics=["pixel"]),
    )
    new = save_memory(
        services,
        entry("fact.vet-pixel-2", "Le véto de Pixel est le Dr Morel", topics=["pixel"]),
    )
    services.memory.set_status(old.memory_id, "superseded", valid_to=NOW - timedelta(days=30))
    services.memory.link(new.uuid, old.uuid, "supersedes")

    pack = build_pack(services, "Who is Pixel's vet?")

    items = [i for i in pack.items() if i["source_type"] == "entry"]
    assert items[0]["id"] == "fact.vet-pixel-2"
    assert [h["id"] for h in items[0]["history"]] == ["fact.vet-pixel"]
    assert "fact.vet-pixel" not in pack.item_ids()


def _vectors(q_old: float, q_new: float, old_new: float):
    """Unit vectors (question, old, new) with these cosines."""
    gram = np.array([[1, q_old, q_new], [q_old, 1, old_new], [q_new, old_new, 1]])
    return np.linalg.cholesky(gram)  # rows: vectors with exactly these dot products


def test_an_update_close_to_the_statement_it_replaces_is_linked_through_it(services):
    """The update says it in other words (another language, the new value's name): by itself
    it is barely about the question, but it is read with the statement it replaces."""
    qvec, old_vec, new_vec = _vectors(q_old=0.87, q_new=0.78, old_new=0.93)
    old = TurnHit(1, "a", None, "telegram", "42", "100", "Hugo", "The standup is at 9:15",
                  datetime(2024, 9, 1), 1.0, vector=old_vec)  # fmt: skip
    new = TurnHit(2, "b", None, "telegram", "42", "200", "Hugo",
                  "Changement : le point du matin passe à 9h45", datetime(2025, 1, 6), 0.5,
                  vector=new_vec)  # fmt: skip
    calibrate = services.embedder.calibrate
    assert calibrate(float(new_vec @ qvec)) < RELEVANT  # not relevant on its own

    score = _update_score(services, qvec, old, new, lambda: 0.0)

    assert score is not None
    # Later chatter, as far from the old statement as from the question, is not an update.
    _, far_old, far_new = _vectors(q_old=0.87, q_new=0.78, old_new=0.80)
    new.vector, old.vector = far_new, far_old
    assert _update_score(services, qvec, old, new, lambda: 0.0) is None
