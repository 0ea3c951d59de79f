"""`elora forget --matching PHRASE`: a preview by chat and date first, then every copy goes."""

import io
import json
import sys
from datetime import datetime, timedelta

import pytest

from core.cli.main import main
from core.memory.api import save_memory
from tests.core.memory.helpers import entry, files_containing, message, source_of

SECRET = "Le digicode de l'atelier de Noé est 5C-2291, porte verte"
START = datetime(2024, 5, 2, 18, 0)


class Terminal(io.StringIO):
    """Keyboard input typed at an interactive terminal."""

    def isatty(self) -> bool:
        return True


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def said(services):
    """The secret said in two chats, and an entry learned from the first message."""
    captures = [
        message("1", f"Note : {SECRET}", START, chat_id="42"),
        message("2", "Et demain, marché à 9h", START + timedelta(minutes=1), chat_id="42"),
        message("3", f"Rappel. {SECRET.upper()}", START + timedelta(days=2), chat_id="77"),
    ]
    services.archive.store_batch(captures)
    services.archive.index_pending()
    save_memory(services, entry("fact.digicode", SECRET, sources=[source_of(captures[0])]))
    services.close()
    return captures


def test_the_preview_lists_messages_by_chat_and_date_memories_and_files(said, capsys):
    code, out, _ = run(capsys, "forget", "--matching", "digicode de l'atelier de NOE", "--dry-run")

    assert code == 0
    assert "2 message(s). A message that contains the phrase is erased whole" in out
    assert "telegram chat 42: 2024-05-02 18:00" in out
    assert "telegram chat 77: 2024-05-04 18:00" in out
    assert "memory fact.digicode (contains it)" in out
    assert "5C-2291" not in out  # ids, chats and dates; never the text


def test_the_json_preview_carries_no_text(said, capsys):
    code, out, _ = run(
        capsys, "forget", "--matching", "digicode de l'atelier", "--dry-run", "--json"
    )

    plan = json.loads(out)
    assert code == 0 and len(plan["messages"]) == 2
    assert [e["memory_id"] for e in plan["entries"]] == ["fact.digicode"]
    assert "5c-2291" not in out.lower()


def test_on_a_terminal_the_preview_comes_first_and_no_keeps_everything(
    said, home, monkeypatch, capsys
):
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))

    code, out, _ = run(capsys, "forget", "--matching", "digicode de l'atelier")

    assert code == 1
    assert out.index("This forget erases") < out.index("cannot be undone") < out.index("kept")
    assert files_containing(home, "5C-2291")


def test_yes_erases_every_copy_and_says_what_went(said, home, capsys):
    code, out, _ = run(capsys, "forget", "--matching", "digicode de l'atelier", "--yes")

    assert code == 0
    assert out.startswith("forgot every copy: 2 message(s), 1 memor(ies)")
    assert files_containing(home, "5C-2291") == []
    assert files_containing(home, "marché à 9h")  # the message without it stays


def test_a_phrase_found_nowhere_erases_nothing(said, capsys):
    code, _, err = run(capsys, "forget", "--matching", "la recette du clafoutis", "--yes")

    assert code == 1
    assert "no copy of that phrase was found" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["forget"],
        ["forget", "fact.digicode", "--matching", "digicode de l'atelier"],
        ["forget", "--matching", "digicode de l'atelier", "--with-sources"],
    ],
)
def test_it_takes_a_memory_id_or_a_phrase(said, capsys, argv):
    code, _, err = run(capsys, *argv)

    assert code == 2
    assert "--matching PHRASE" in err


def test_a_phrase_too_short_is_refused_in_one_line(said, capsys):
    code, _, err = run(capsys, "forget", "--matching", "de", "--yes")

    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "at least 6" in err
