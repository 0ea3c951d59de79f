"""Entry versions: every change is recorded (what, when, which surface), history lists them,
a version can be brought back as a new one, and forgetting erases them like every copy."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput, NotFound
from core.memory.api import forget_memory, remember, save_memory, search_memory
from core.memory.forget import forget_matching
from core.memory.versions import history, restore
from core.undo.context import acting
from core.undo.reverse import undo
from tests.core.memory.helpers import entry, files_containing


def test_every_change_is_a_version_with_its_surface(services, clock):
    save_memory(services, entry("fact.rent", "Le loyer est de 950 €"))
    clock.advance(days=1)
    with acting("telegram", actor="42"):
        remember(services, "Le loyer est de 980 € depuis juillet", memory_id="fact.rent")
    with acting("cockpit"):
        services.memory.set_status("fact.rent", "deprecated")

    versions = history(services, "fact.rent")

    assert [(v.version, v.change, v.surface, v.actor) for v in versions] == [
        (1, "create", "system", None), (2, "remember", "telegram", "42"),
        (3, "update", "cockpit", None),
    ]  # fmt: skip
    assert [v.data["canonical_text"][:20] for v in versions] == [
        "Le loyer est de 950 ", "Le loyer est de 980 ", "Le loyer est de 980 "]  # fmt: skip
    assert versions[2].data["status"] == "deprecated"


def test_an_entry_older_than_versions_keeps_its_state_before_its_first_change(services):
    save_memory(services, entry("fact.rent", "Le loyer est de 950 €"))
    services.db.execute("DELETE FROM entry_versions")  # as written before migration 16
    assert [v.change for v in history(services, "fact.rent")] == ["baseline"]

    save_memory(services, entry("fact.rent", "Le loyer est de 980 €"))

    versions = history(services, "fact.rent")
    assert [(v.change, v.data["canonical_text"]) for v in versions] == [
        ("baseline", "Le loyer est de 950 €"), ("update", "Le loyer est de 980 €")]  # fmt: skip


def test_restoring_a_version_writes_it_again_as_a_new_one_and_re_embeds_it(services):
    save_memory(services, entry("pref.tea", "Camille drinks green tea", topics=["tea"]))
    save_memory(services, entry("pref.tea", "Camille switched to black coffee", topics=["coffee"]))

    with acting("cli") as who:
        restored = restore(services, "pref.tea", 1)

    assert restored.canonical_text == "Camille drinks green tea" and restored.topics == ["tea"]
    assert [v.change for v in history(services, "pref.tea")] == ["create", "update", "restore v1"]
    assert [h["memory_id"] for h in search_memory(services, "green tea")][:1] == ["pref.tea"]
    # A restore is undoable like an edit.
    undo(services, who.last_action)
    assert services.memory.require("pref.tea").canonical_text == "Camille switched to black coffee"


def test_restore_explains_what_it_cannot_do(services):
    save_memory(services, entry("pref.tea", "Camille drinks green tea"))
    save_memory(services, entry("pref.tea", "Camille drinks black coffee"))

    with pytest.raises(NotFound, match=r"no version 7 \(versions: 1, 2\)"):
        restore(services, "pref.tea", 7)
    with pytest.raises(InvalidInput, match="already holds"):
        restore(services, "pref.tea", 2)
    with pytest.raises(NotFound):
        history(services, "pref.nothing")


def test_a_forgotten_text_is_not_restored_from_a_version(services):
    save_memory(services, entry("pref.tea", "Camille drinks green tea"))
    save_memory(services, entry("pref.tea", "Camille drinks black coffee"))
    remember(services, "Camille drinks green tea", memory_id="fact.other")
    forget_memory(services, "fact.other")  # the words are forgotten, with every copy

    assert [v.version for v in history(services, "pref.tea")] == [2]  # the old version went
    with pytest.raises(NotFound):
        restore(services, "pref.tea", 1)


def test_forgetting_erases_every_version_and_no_file_keeps_them(services, home):
    save_memory(services, entry("fact.locker", "Mon code de casier est 1066-OKAPI"))
    save_memory(services, entry("fact.locker", "Mon code de casier est 4711-ZEBRA"))
    save_memory(services, entry("fact.gym", "La salle ouvre à 6h, code 2024-LYNX"))
    save_memory(services, entry("fact.gym", "La salle de sport ouvre à 6h"))

    forget_memory(services, "fact.locker")
    forget_matching(services, "2024-LYNX")  # only an earlier version of fact.gym holds it

    assert services.db.rows("SELECT entry_uuid FROM entry_versions WHERE entry_uuid = ?",
                            (services.memory.get("fact.gym").uuid,))  # its current one stays  # fmt: skip
    assert [v.data["canonical_text"] for v in history(services, "fact.gym")] == [
        "La salle de sport ouvre à 6h"]  # fmt: skip
    services.db.checkpoint()
    for secret in ("1066-OKAPI", "4711-ZEBRA", "2024-LYNX"):
        assert files_containing(home, secret) == [], secret
