"""A new ELORA_HOME starts with identity.md from the shipped starter, never the demo's person."""

import json
import logging

from core.cli.main import main
from core.config import load_settings
from core.home import prepare_home
from core.shipped import identity_example, identity_starter


def first_command(capsys) -> None:
    assert main(["skills", "list", "--json"]) == 0
    capsys.readouterr()


def test_a_new_home_gets_the_identity_starter_on_its_first_command(home, capsys):
    assert not home.exists()

    first_command(capsys)

    assert (home / "identity.md").read_text(encoding="utf-8") == identity_starter().read_text()


def test_the_starter_states_nothing_about_the_demo_operator():
    example = identity_example().read_text(encoding="utf-8")
    starter = identity_starter().read_text(encoding="utf-8")
    facts = {
        line.partition(":")[2].strip()
        for line in example.splitlines()
        if line.startswith(("Operator:", "Priorities:", "Stable preferences:"))
    }

    assert len(facts) == 3
    for fact in facts:
        assert fact not in starter
    assert "Camille" in example and "Camille" not in starter


def test_the_first_context_of_a_new_home_wakes_up_with_the_starter(home, capsys):
    assert main(["context", "Who am I and what do I like?", "--json"]) == 0

    pack = json.loads(capsys.readouterr().out)
    [identity] = [item for item in pack["layers"]["L0"]["items"] if item["id"] == "identity"]
    assert "Operator: not described yet" in identity["text"]
    assert identity["sources"] == [{"file": str(home / "identity.md")}]
    assert not [m for m in pack["missing"] if "identity" in m]


def test_a_home_already_in_use_is_not_given_one(home, capsys):
    home.mkdir(parents=True)
    (home / "notes.txt").write_text("the operator's own file\n", encoding="utf-8")

    first_command(capsys)

    assert not (home / "identity.md").exists()


def test_an_identity_the_operator_deleted_does_not_come_back(home, capsys):
    first_command(capsys)
    (home / "identity.md").unlink()

    first_command(capsys)

    assert not (home / "identity.md").exists()


def test_an_identity_file_set_elsewhere_is_neither_created_nor_doubled(
    home, tmp_path, monkeypatch, capsys
):
    elsewhere = tmp_path / "me.md"
    monkeypatch.setenv("ELORA_IDENTITY_FILE", str(elsewhere))

    first_command(capsys)

    assert not elsewhere.exists()
    assert not (home / "identity.md").exists()


def test_a_home_that_cannot_be_created_is_logged_not_fatal(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    settings = load_settings(home=blocker / "home")

    with caplog.at_level(logging.WARNING, logger="core.home"):
        assert prepare_home(settings) is False

    assert "could not create" in caplog.text and str(blocker) in caplog.text


def test_warming_up_a_long_running_surface_freezes_what_is_loaded(services):
    # The collector's full passes walked every loaded library's objects on the bot's event
    # loop; after the warm-up they are out of its reach.
    import gc

    from core import app

    gc.unfreeze()
    try:
        app.warm_up(services)
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()  # this test process goes on

    assert frozen > 10_000


def test_warming_up_reads_where_each_days_messages_start(services):
    # The first present-state question would otherwise read every message's date (130 ms at
    # 100k messages) before its answer.
    from core.recall import later_start
    from tests.core.memory.helpers import NOW, message

    services.archive.capture(message("m1", "Je commence chez Gallimard lundi", NOW), index=False)
    later_start._KEPT.pop(services.db.engine, None)

    services.warm_up()  # what app.warm_up runs, without freezing this process's collector

    kept = later_start._KEPT.get(services.db.engine)
    assert (kept is not None) is (services.db.dialect == "sqlite")  # SQLite's walk only
