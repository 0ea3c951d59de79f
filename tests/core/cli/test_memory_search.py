"""`elora memories --search`: ranked with scores, best first, without the weak matches."""

from __future__ import annotations

import json

from core.cli.main import main
from core.memory.api import remember

ENTRIES = {
    "fact.dentist": "Camille's dentist is Dr Benali in Lyon",
    "fact.coffee": "Je bois mon café sans sucre, avec un nuage de lait",
    "fact.flight": "My flight to Oslo leaves on Tuesday",
    "fact.cello": "Camille joue du violoncelle le mardi",
    "fact.cat": "Mon chat s'appelle Pixel",
    "fact.job": "Camille works at Lumen Logistics",
}


def searched(capsys, query: str, *extra: str) -> list[dict]:
    assert main(["memories", "--search", query, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_search_ranks_with_scores_and_leaves_weak_matches_out(services, capsys):
    for memory_id, text in ENTRIES.items():
        remember(services, text, memory_id=memory_id)

    found = searched(capsys, "Quel est le dentiste de Camille ?")
    every = searched(capsys, "Quel est le dentiste de Camille ?", "--min-score", "0")

    assert [f["memory_id"] for f in found] == ["fact.dentist"]
    assert found[0]["score"] > 0.45 and found[0]["canonical_text"] == ENTRIES["fact.dentist"]
    assert len(every) == len(ENTRIES)  # the weak ones were only left out, not lost
    assert [e["score"] for e in every] == sorted((e["score"] for e in every), reverse=True)
    assert searched(capsys, "quantum chromodynamics") == []
    assert [f["memory_id"] for f in searched(capsys, "what is my cat's name")] == ["fact.cat"]


def test_the_search_table_shows_scores_and_says_what_it_left_out(services, capsys):
    for memory_id, text in ENTRIES.items():
        remember(services, text, memory_id=memory_id)

    assert main(["memories", "--search", "Quel est le dentiste de Camille ?"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "memory_id" in line)
    assert header.split()[1] == "score"
    assert "1 memories matching 'Quel est le dentiste de Camille ?', best first" in out
    assert "weaker match(es) below the relevance cut-off" in out

    assert main(["memories", "--search", "quantum chromodynamics"]) == 0
    assert "nothing relevant enough" in capsys.readouterr().out
