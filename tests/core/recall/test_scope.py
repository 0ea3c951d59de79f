"""Archive recall is scoped to the chats a user takes part in and what they imported; the
operator recalls everything."""

import json
from datetime import datetime

import pytest

from core.archive.records import CaptureIn
from core.config import load_settings
from core.importers.runner import import_paths
from core.recall.pack import build_pack
from core.recall.scope import visible_chats
from core.services import Services
from tests.core.memory.helpers import FixedClock

OPERATOR, GUEST, LEA = "111", "222", "333"
# Letters and a dash: no capture id, score or date in a pack can spell it by chance.
SECRET = "4242-OSLO"


@pytest.fixture
def shared(home, embedder, monkeypatch):
    """Two allowlisted users on one Elora: the operator (first id) and a guest."""
    monkeypatch.setenv("ELORA_TELEGRAM_ALLOWED_USERS", f"{OPERATOR},{GUEST}")
    svc = Services(load_settings(), embedder=embedder, clock=FixedClock())
    day = datetime(2024, 6, 1, 10, 0)

    def say(chat, user, sender, message_id, text):
        return CaptureIn(
            surface="telegram", chat_id=chat, message_id=message_id, text=text, sent_at=day,
            user_id=user, sender=sender,
        )  # fmt: skip

    svc.archive.store_batch(
        [
            say("900", OPERATOR, "Camille", "1", f"Le code de mon coffre à la banque est {SECRET}"),
            say("901", GUEST, "Hugo", "1", "Le code de mon casier au bureau est 1357"),
            say("903", GUEST, "Hugo", "1", "Le code du local vélo de l'immeuble est 8080"),
            say("903", LEA, "Léa", "2", "Merci, je le note pour le local vélo"),
        ]
    )
    svc.archive.index_pending()
    yield svc
    svc.close()


def _chats(pack) -> set[str]:
    return {i["chat_id"] for i in pack.items() if i["source_type"] == "archive"}


def test_a_guest_recalls_only_the_chats_they_take_part_in(shared):
    assert visible_chats(shared, GUEST) == ["901", "903"]

    pack = build_pack(shared, "C'est quoi le code de mon coffre ?", user_id=GUEST, chat_id="901")

    assert "900" not in _chats(pack)  # the operator's private chat never reaches the guest
    assert SECRET not in json.dumps(pack.to_json(), ensure_ascii=False)


def test_a_neighbour_from_another_chat_never_rides_along(shared):
    """A short turn is shown with the turn it answers; should that link ever point into a chat
    the guest cannot see (a damaged key), the neighbour stays out, not the secret in."""
    rowid = {r[1]: r[0] for r in shared.db.rows("SELECT rowid, text FROM captures")}
    shared.db.execute(
        "UPDATE turn_keys SET context_rowid = ? WHERE capture_rowid = ?",
        (rowid[f"Le code de mon coffre à la banque est {SECRET}"],
         rowid["Merci, je le note pour le local vélo"]),
    )  # fmt: skip

    pack = build_pack(shared, "Qui note le code du local vélo ?", user_id=GUEST, chat_id="901")

    assert "903" in _chats(pack)
    assert SECRET not in json.dumps(pack.to_json(), ensure_ascii=False)


def test_a_guest_recalls_a_chat_they_take_part_in(shared):
    pack = build_pack(shared, "C'est quoi le code du local vélo ?", user_id=GUEST, chat_id="901")

    assert "903" in _chats(pack)


@pytest.mark.parametrize("user_id", [OPERATOR, None, "operator"])
def test_the_operator_recalls_every_chat(shared, user_id):
    pack = build_pack(shared, "C'est quoi le code de mon coffre ?", user_id=user_id)

    assert "900" in _chats(pack)


def test_someone_else_sees_nothing_of_the_archive(shared):
    assert visible_chats(shared, "999") == []

    pack = build_pack(shared, "C'est quoi le code du local vélo ?", user_id="999")

    assert _chats(pack) == set()


def test_a_chat_a_user_imported_is_theirs(shared, tmp_path):
    export = {
        "name": "Notes de Hugo", "type": "personal_chat", "id": 904,
        "messages": [{
            "id": 1, "type": "message", "date": "2024-05-01T10:00:00", "from": "Paul",
            "from_id": "user444", "text": "Le code wifi du chalet est MontBlanc74",
        }],
    }  # fmt: skip
    path = tmp_path / "result.json"
    path.write_text(json.dumps(export), encoding="utf-8")

    import_paths(shared, [path], imported_by=GUEST)

    assert "904" in visible_chats(shared, GUEST)
    pack = build_pack(shared, "C'est quoi le code wifi du chalet ?", user_id=GUEST)
    assert "904" in _chats(pack)


def test_an_entry_learned_from_a_chat_the_guest_cannot_recall_stays_out(shared):
    from core.memory.api import save_memory
    from tests.core.memory.helpers import entry

    source = {"surface": "telegram", "chat_id": "900", "message_id": "1", "date": "2024-06-01"}
    save_memory(
        shared,
        entry(
            "fact.coffre", "Le code du coffre à la banque est 4242", importance=4, sources=[source]
        ),
    )

    guest = build_pack(shared, "C'est quoi le code du coffre ?", user_id=GUEST)
    operator = build_pack(shared, "C'est quoi le code du coffre ?", user_id=OPERATOR)

    assert "fact.coffre" not in guest.item_ids()
    assert "fact.coffre" in operator.item_ids()


def test_a_guest_in_every_chat_searches_unscoped_and_others_do_not(shared):
    from core.recall.scope import search_scope

    # The guest is not in the operator's chat 900: their searches stay scoped.
    assert search_scope(shared, visible_chats(shared, GUEST)) == ["901", "903"]
    assert search_scope(shared, None) is None
    assert search_scope(shared, ["900", "901", "903"]) is None  # every chat there is
    assert search_scope(shared, ["900", "901", "903", "905"]) is None
    assert search_scope(shared, []) == []


def test_a_chat_newer_than_an_unscoped_search_stays_out(shared):
    """The scope is looked at once per pack: a chat created after that look (another user's
    message arriving meanwhile) must not reach a guest through the unscoped search."""
    from core.recall.evidence import ArchiveEvidence

    question = "C'est quoi le code du garage ?"
    chats = ["900", "901", "903"]  # a guest in every chat (as the operator's id is not theirs)
    evidence = ArchiveEvidence(
        shared, question, shared.embedder.embed_query(question), chats=chats,
        present_state=True, exclude=set(),
    )  # fmt: skip
    assert evidence.chats is None  # searched unscoped
    shared.archive.store_batch(
        [
            CaptureIn(
                surface="telegram",
                chat_id="907",
                message_id="1",
                sent_at=datetime(2024, 6, 2),
                text="Le code du garage est 9911",
                user_id=LEA,
                sender="Léa",
            )
        ]
    )
    shared.archive.index_pending()

    evidence.search(None, 0.0)
    found = [item for item, _ in evidence.items("L2", 0.0)]

    assert found  # the guest's own chats are searched
    assert "garage est 9911" not in json.dumps(found, ensure_ascii=False, default=str)
