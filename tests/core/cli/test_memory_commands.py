"""`elora remember`, `elora memories`, `elora forget` and `elora context`, driven through main()."""

import io
import json
import sys
from datetime import datetime, timedelta

import pytest

from core.archive.records import CaptureIn
from core.cli.main import main
from core.memory.api import save_memory
from tests.core.memory.helpers import entry, files_containing, source_of


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys, *filters: str) -> list[dict]:
    code, out, _ = run(capsys, "memories", "--json", *filters)
    assert code == 0
    return json.loads(out)


class Terminal(io.StringIO):
    """Keyboard input typed at an interactive terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def piped(monkeypatch):
    """stdin is a pipe, as in scripts and cron jobs."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))


def test_remember_saves_with_the_given_tier_kind_importance_topics_and_scope(home, capsys):
    code, out, _ = run(
        capsys,
        "remember",
        "Je bois mon café sans sucre, avec un nuage de lait",
        "--kind", "preference",
        "--importance", "4",
        "--topic", "café",
        "--topic", "Matin",
        "--scope", "user:7",
        "--id", "pref.coffee",
    )  # fmt: skip

    assert code == 0
    assert "pref.coffee" in out and "personalized" in out
    [saved] = listed(capsys, "--scope", "user:7")
    assert saved["memory_id"] == "pref.coffee"
    assert (saved["tier"], saved["kind"], saved["importance"]) == ("personalized", "preference", 4)
    assert saved["topics"] == ["café", "matin"]
    assert saved["canonical_text"] == "Je bois mon café sans sucre, avec un nuage de lait"
    assert saved["confidence"] > 0.9 and saved["observations"] == 1


def test_remember_without_options_makes_a_fact_with_a_readable_id(home, capsys):
    code, out, _ = run(capsys, "remember", "Le garage Dupont ferme à 18h le samedi")

    assert code == 0
    [saved] = listed(capsys)
    assert (saved["tier"], saved["kind"], saved["importance"]) == ("semantic", "fact", 1)
    assert saved["memory_id"].startswith("fact.") and saved["memory_id"] in out
    assert saved["topics"]  # derived from the text when none are given


def test_remember_twice_with_the_same_id_updates_the_memory(home, capsys):
    run(capsys, "remember", "Le loyer est de 950 €", "--id", "fact.rent")
    run(capsys, "remember", "Le loyer est de 980 € depuis juillet", "--id", "fact.rent")

    assert [m["canonical_text"] for m in listed(capsys)] == ["Le loyer est de 980 € depuis juillet"]


def test_remember_the_same_text_twice_without_id_confirms_one(home, capsys):
    run(capsys, "remember", "Appeler le plombier lundi")
    run(capsys, "remember", "Appeler le plombier lundi")

    [kept] = listed(capsys)
    assert kept["observations"] == 2  # see test_remember_command.py


@pytest.mark.parametrize("bad", [["--scope", "team:x"], ["--id", "Mon Casier"]])
def test_remember_refuses_an_invalid_entry_with_one_clear_line(home, capsys, bad):
    code, _, err = run(capsys, "remember", "Je bois mon café sans sucre", *bad)

    assert code == 1
    assert err.startswith("elora: invalid memory entry")
    assert len(err.strip().splitlines()) == 1
    assert listed(capsys) == []


def test_remember_rejects_an_unknown_tier_before_touching_the_store(home, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["remember", "Je bois mon café sans sucre", "--tier", "long-term"])

    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    assert not (home / "elora.db").exists()


@pytest.fixture
def stocked(home, capsys):
    for argv in (
        ["Je préfère des réponses courtes", "--kind", "preference", "--importance", "5",
         "--topic", "style", "--id", "pref.short"],
        ["Toujours demander à Marc avant une dépense de plus de 500 €", "--kind", "constraint",
         "--topic", "argent", "--id", "rule.expenses"],
        ["Le groupe du vélo roule le dimanche à 9h", "--topic", "vélo", "--scope", "chat:99",
         "--id", "fact.bike-club"],
        ["Le NAS redémarre chaque nuit à 3h", "--tier", "environment", "--topic", "nas",
         "--id", "env.nas"],
    ):  # fmt: skip
        assert run(capsys, "remember", *argv)[0] == 0


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([], {"pref.short", "rule.expenses", "fact.bike-club", "env.nas"}),
        (["--tier", "procedural"], {"rule.expenses"}),
        (["--tier", "environment"], {"env.nas"}),
        (["--scope", "chat:99"], {"fact.bike-club"}),
        (["--topic", "style"], {"pref.short"}),
        (["--topic", "vélo", "--scope", "global"], set()),
    ],
)
def test_memories_filters_by_tier_scope_and_topic(stocked, capsys, filters, expected):
    assert {m["memory_id"] for m in listed(capsys, *filters)} == expected


def test_memories_prints_a_readable_table_without_json(stocked, capsys):
    code, out, _ = run(capsys, "memories", "--tier", "procedural")

    assert code == 0
    assert "rule.expenses" in out and "procedural" in out
    assert "pref.short" not in out


SECRET = "Mon code de casier est 4711-ZEBRA"


@pytest.fixture
def locker(home, capsys):
    assert run(capsys, "remember", SECRET, "--topic", "sport", "--id", "fact.locker")[0] == 0
    assert files_containing(home, "4711-ZEBRA")


def test_forget_refuses_without_yes_when_stdin_is_not_a_terminal(locker, piped, capsys):
    code, _, err = run(capsys, "forget", "fact.locker")

    assert code == 2
    assert "--yes" in err
    assert [m["memory_id"] for m in listed(capsys)] == ["fact.locker"]


@pytest.mark.parametrize("answer", ["n\n", "\n", "non\n"])
def test_forget_on_a_terminal_keeps_the_memory_unless_confirmed(
    locker, monkeypatch, capsys, answer
):
    monkeypatch.setattr(sys, "stdin", Terminal(answer))

    code, out, _ = run(capsys, "forget", "fact.locker")

    assert code == 1
    assert "fact.locker" in out and "kept" in out
    assert [m["memory_id"] for m in listed(capsys)] == ["fact.locker"]


def test_forget_on_a_terminal_erases_after_confirmation(locker, home, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal("oui\n"))

    code, out, _ = run(capsys, "forget", "fact.locker")

    assert code == 0
    assert "forgot fact.locker" in out
    assert listed(capsys) == []
    assert files_containing(home, "4711-ZEBRA") == []


def test_forget_with_yes_leaves_nothing_to_find_by_any_command_or_file(locker, home, piped, capsys):
    run(capsys, "remember", "Le vestiaire de la piscine ferme à 21h", "--id", "fact.pool")
    before = json.loads(run(capsys, "context", "Quel est mon code de casier ?", "--json")[1])
    assert "fact.locker" in _pack_ids(before)

    code, out, _ = run(capsys, "forget", "fact.locker", "--yes")

    assert code == 0 and "forgot fact.locker" in out
    assert [m["memory_id"] for m in listed(capsys)] == ["fact.pool"]
    searched = listed(capsys, "--search", "code de casier 4711-ZEBRA", "--status", "all")
    assert "fact.locker" not in [m["memory_id"] for m in searched]
    after = json.loads(run(capsys, "context", "Quel est mon code de casier ?", "--json")[1])
    assert "fact.locker" not in _pack_ids(after)
    _, text, _ = run(capsys, "context", "Quel est mon code de casier ?")
    assert "ZEBRA" not in text
    for needle in (SECRET, "4711-ZEBRA", "ZEBRA"):
        assert files_containing(home, needle) == [], needle
    assert run(capsys, "forget", "fact.locker", "--yes")[0] == 1  # nothing left to forget


def test_forget_with_sources_erases_the_archived_message_it_came_from(
    home, services, piped, capsys
):
    start = datetime(2024, 5, 2, 18, 0)
    said = [
        CaptureIn(surface="telegram", chat_id="42", message_id=str(100 + n), sender=who,
                  text=text, sent_at=start + timedelta(minutes=n))
        for n, (who, text) in enumerate([
            ("Camille", "Note ça pour la salle de sport stp"),
            ("Camille", SECRET),
            ("Camille", "Et mon vélo est au sous-sol, place B12"),
        ])
    ]  # fmt: skip
    services.archive.store_batch(said)
    services.archive.index_pending()
    save_memory(
        services,
        entry(
            "fact.locker", "Casier de la salle de sport : 4711-ZEBRA", sources=[source_of(said[1])]
        ),
    )

    code, out, _ = run(capsys, "forget", "fact.locker", "--with-sources", "--yes", "--json")

    assert code == 0
    report = json.loads(out)
    assert (report["memory_id"], report["removed_captures"]) == ("fact.locker", 1)
    for needle in (SECRET, "4711-ZEBRA", "ZEBRA"):
        assert files_containing(home, needle) == [], needle
    assert files_containing(home, "place B12")  # a message that was not a source stays


def _pack_ids(pack: dict) -> list[str]:
    return [item["id"] for layer in pack["layers"].values() for item in layer["items"]]


@pytest.fixture
def context_home(home, services):
    home.mkdir(parents=True, exist_ok=True)
    (home / "identity.md").write_text(
        "# Camille\nArchitecte à Lyon. Mission : ne rien oublier.", encoding="utf-8"
    )
    for data in (
        entry("pref.short", "Réponses courtes", kind="preference", importance=5),
        entry("fact.bike", "Mon vélo est un Riverside 500 bleu", topics=["vélo"]),
        entry("fact.club-bike", "Le vélo du club est rangé au local B", scope="chat:99"),
        entry("rule.bike", "Ne jamais laisser le vélo dehors la nuit", kind="constraint"),
    ):
        save_memory(services, data)
    services.archive.capture(
        CaptureIn(surface="telegram", chat_id="42", message_id="7", sender="Camille",
                  text="J'ai regonflé les pneus du vélo bleu", sent_at=datetime(2024, 5, 4, 9))
    )  # fmt: skip


def test_context_json_prints_the_pack_contract(context_home, capsys):
    code, out, _ = run(capsys, "context", "Tu te souviens de mon vélo ?", "--chat", "42", "--json")

    assert code == 0
    pack = json.loads(out)
    assert {"version", "question", "classification", "budget", "layers", "cut", "missing",
            "advice", "degraded", "degraded_reason", "time_window"} <= set(pack)  # fmt: skip
    assert pack["question"] == "Tu te souviens de mon vélo ?"
    assert pack["chat_id"] == "42"
    assert pack["degraded"] is False
    assert list(pack["layers"]) == ["L0", "L1", "L2", "L3"]
    ids = _pack_ids(pack)
    assert ids[:2] == ["identity", "pref.short"]
    assert "fact.bike" in ids and "rule.bike" in ids
    assert "fact.club-bike" not in ids  # scoped to another chat
    items = [i for layer in pack["layers"].values() for i in layer["items"]]
    archive = [i for i in items if i["tier"] == "archive"]
    assert archive and archive[0]["chat_id"] == "42" and archive[0]["message_ids"] == ["7"]


def test_context_honours_the_budget(context_home, capsys):
    full = json.loads(run(capsys, "context", "Tu te souviens de mon vélo ?", "--json")[1])
    code, out, _ = run(
        capsys, "context", "Tu te souviens de mon vélo ?", "--budget", "80", "--json"
    )

    tight = json.loads(out)
    assert code == 0
    assert tight["budget"]["total"] == 80
    assert tight["budget"]["used"] <= 80 < full["budget"]["used"]
    assert tight["cut"]


def test_context_without_json_renders_layers_with_tier_labels(context_home, capsys):
    code, out, _ = run(capsys, "context", "Tu te souviens de mon vélo ?", "--chat", "42")

    assert code == 0
    assert "L0 identity wake-up" in out and "L2 focused recall" in out
    assert "[personalized:preference] pref.short" in out
    assert "[semantic:pattern] fact.bike" in out
    assert "[procedural:rule] rule.bike" in out
    assert "[archive:evidence]" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
