"""The Markdown mirror: a readable snapshot that never touches the database; edits made in it
come back only as proposals; a forgotten entry leaves it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

import pytest
import yaml

from core.cli.main import main
from core.config import load_settings
from core.learning import review
from core.memory.api import forget_memory
from core.memory.mirror import SECTIONS, parse_entry_file
from core.services import Services
from tests.core.learning.support import NOW, FixedClock, capture, entry


@pytest.fixture
def services(home, embedder):
    svc = Services(load_settings(), embedder=embedder, clock=FixedClock())
    yield svc
    svc.close()


@pytest.fixture
def memory(services):
    """Four entries across scopes, tiers and statuses, one superseding another, one sourced."""
    source = capture(services, "On part sur Postgres pour l'event store.", chat_id="77")
    services.memory.save(entry(
        "decision.event-store", "The Atlas event store runs on PostgreSQL 16", kind="decision",
        scope="project:atlas", importance=4, topics=["atlas", "postgres"], truth_mode="observed",
        sources=[{"capture_id": source, "surface": "telegram", "chat_id": "77",
                  "date": NOW.isoformat()}],
        attributes={"temporality": "permanent"},
    ))  # fmt: skip
    old = services.memory.save(entry("fact.home", "Camille lives in Paris",
                                     status="superseded", valid_to=NOW))  # fmt: skip
    new = services.memory.save(entry("fact.home-lyon", "Camille lives in Lyon, Croix-Rousse"))
    services.memory.link(new.uuid, old.uuid, "supersedes")
    services.memory.save(entry("pref.reply-length", "Camille wants short answers",
                               kind="preference", importance=5))  # fmt: skip
    return services


def dump(home) -> list[str]:
    """Every table's rows, as SQL, straight from the SQLite file."""
    conn = sqlite3.connect(home / "elora.db")
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def export(directory) -> None:
    assert main(["export-markdown", str(directory)]) == 0


def test_export_writes_readme_index_manifest_and_one_file_per_entry(memory, home, tmp_path, capsys):
    out = tmp_path / "mirror"

    assert main(["export-markdown", str(out), "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["entries"] == 4
    assert {p.name for p in out.iterdir()} == {"README.md", "index.md", "manifest.json", "entries"}
    files = sorted(p.relative_to(out).as_posix() for p in (out / "entries").rglob("*.md"))
    assert files == [
        "entries/global/personalized/active/pref.reply-length.md",
        "entries/global/semantic/active/fact.home-lyon.md",
        "entries/global/semantic/superseded/fact.home.md",
        "entries/project-atlas/procedural/active/decision.event-store.md",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert {k: v["path"] for k, v in manifest["entries"].items()} == {
        p.rsplit("/", 1)[1][:-3]: p for p in files
    }
    index = (out / "index.md").read_text()
    assert all(f"[{m}](" in index for m in manifest["entries"])
    assert "import-markdown" in (out / "README.md").read_text()


def test_an_entry_file_has_front_matter_and_the_six_sections(memory, tmp_path):
    out = tmp_path / "mirror"
    export(out)

    text = (out / "entries/project-atlas/procedural/active/decision.event-store.md").read_text()

    front = yaml.safe_load(text.split("---\n")[1])
    assert front["memory_id"] == "decision.event-store" and front["scope"] == "project:atlas"
    assert (front["tier"], front["kind"], front["status"]) == ("procedural", "decision", "active")
    assert front["importance"] == 4 and front["topics"] == ["atlas", "postgres"]
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == list(SECTIONS)
    body = text.split("## canonical_text\n", 1)[1]
    assert body.strip().startswith("The Atlas event store runs on PostgreSQL 16")
    assert "surface: telegram" in text and "chat_id: 77" in text  # provenance
    assert '"temporality": "permanent"' in text  # metadata
    history = (out / "entries/global/semantic/superseded/fact.home.md").read_text()
    assert "supersedes → fact.home-lyon" in history  # evidence: the link, by memory_id


def test_export_never_modifies_the_database(memory, home, tmp_path):
    before = dump(home)

    export(tmp_path / "mirror")
    export(tmp_path / "mirror")  # again, over an existing mirror

    assert dump(home) == before


def test_an_edit_in_the_mirror_becomes_a_pending_proposal_and_nothing_else(
    memory, home, tmp_path, capsys
):
    out = tmp_path / "mirror"
    export(out)
    path = out / "entries/global/personalized/active/pref.reply-length.md"
    text = path.read_text()
    text = text.replace("importance: 5", "importance: 4")
    text = text.replace("Camille wants short answers", "Camille wants short answers, no emojis", 1)
    path.write_text(text)
    entries_before = [r for r in dump(home) if "memory_entries" in r]
    capsys.readouterr()

    assert main(["import-markdown", str(out), "--json"]) == 0

    outcome = json.loads(capsys.readouterr().out)
    assert len(outcome["proposals"]) == 1 and outcome["unchanged"] == 3
    assert outcome["errors"] == []
    [proposal] = memory.proposals.list()
    assert proposal.id == outcome["proposals"][0]
    assert proposal.status == "pending" and proposal.origin == "markdown"
    assert proposal.memory_id == "pref.reply-length"
    assert proposal.text == "Camille wants short answers, no emojis"
    assert [r for r in dump(home) if "memory_entries" in r] == entries_before


def test_approving_a_mirror_edit_updates_the_entry_and_keeps_its_history(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    path = out / "entries/project-atlas/procedural/active/decision.event-store.md"
    path.write_text(path.read_text().replace("PostgreSQL 16", "PostgreSQL 17", 1))
    before = memory.memory.require("decision.event-store")
    main(["import-markdown", str(out)])
    [proposal] = memory.proposals.list()

    updated = review.approve(memory, proposal.id)

    assert updated.memory_id == "decision.event-store" and updated.uuid == before.uuid
    assert updated.canonical_text == "The Atlas event store runs on PostgreSQL 17"
    assert memory.memory.count() == 4
    assert updated.scope == "project:atlas" and updated.importance == 4
    assert updated.created_at == before.created_at
    # The edit adds to the provenance rather than replacing it.
    assert before.sources[0] in updated.sources
    assert updated.attributes["temporality"] == "permanent"


def test_importing_the_same_edit_twice_files_one_proposal(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    path = out / "entries/global/semantic/active/fact.home-lyon.md"
    path.write_text(path.read_text().replace("Croix-Rousse", "les Pentes", 1))
    capsys.readouterr()

    assert main(["import-markdown", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["import-markdown", str(out), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)

    assert first["proposals"] == second["proposals"]
    assert len(memory.proposals.list()) == 1


def test_only_an_open_mirror_proposal_with_the_same_edit_is_reused(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    path = out / "entries/global/semantic/active/fact.home-lyon.md"
    original = path.read_text()
    path.write_text(original.replace("Croix-Rousse", "les Pentes", 1))
    capsys.readouterr()
    assert main(["import-markdown", str(out), "--json"]) == 0
    [first] = json.loads(capsys.readouterr().out)["proposals"]

    path.write_text(original.replace("Croix-Rousse", "Vieux Lyon", 1))
    assert main(["import-markdown", str(out), "--json"]) == 0
    [other] = json.loads(capsys.readouterr().out)["proposals"]
    review.reject(memory, other)
    assert main(["import-markdown", str(out), "--json"]) == 0
    [again] = json.loads(capsys.readouterr().out)["proposals"]

    assert len({first, other, again}) == 3
    assert {p.id for p in memory.proposals.list()} == {first, again}


def test_an_unedited_mirror_imports_as_unchanged(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    capsys.readouterr()

    assert main(["import-markdown", str(out), "--json"]) == 0

    outcome = json.loads(capsys.readouterr().out)
    assert outcome == {"proposals": [], "unchanged": 4, "errors": [], "forgotten": 0,
                       "forget_proposals": []}  # fmt: skip


def test_a_broken_file_is_reported_and_the_rest_still_imports(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    (out / "entries/global/semantic/active/fact.home-lyon.md").write_text("no front matter")

    assert main(["import-markdown", str(out)]) == 0

    captured = capsys.readouterr()
    assert "0 proposal(s) from edits, 3 unchanged" in captured.out
    assert "no YAML front matter" in captured.err


def test_import_refuses_a_folder_that_is_not_a_mirror(home, tmp_path, capsys):
    assert main(["import-markdown", str(tmp_path)]) == 1
    assert "not an Elora mirror" in capsys.readouterr().err


def test_a_forgotten_entry_leaves_the_home_mirror_at_once_and_the_next_export(
    memory, home, tmp_path
):
    out = tmp_path / "mirror"
    export(out)
    export(home / "mirror")  # the scheduled mirror under ELORA_HOME
    home_file = home / "mirror/entries/global/personalized/active/pref.reply-length.md"
    assert home_file.exists()

    forget_memory(memory, "pref.reply-length")

    assert not home_file.exists()
    assert "pref.reply-length" not in (home / "mirror/manifest.json").read_text()
    assert "pref.reply-length" not in (home / "mirror/index.md").read_text()
    export(out)
    assert not list(out.rglob("pref.reply-length.md"))
    assert "pref.reply-length" not in (out / "manifest.json").read_text()
    assert "short answers" not in "".join(p.read_text() for p in out.rglob("*.md"))


def test_parse_entry_file_reads_front_matter_and_canonical_text(memory, tmp_path):
    out = tmp_path / "mirror"
    export(out)

    data = parse_entry_file(out / "entries/global/semantic/superseded/fact.home.md")

    assert data["canonical_text"] == "Camille lives in Paris"
    assert data["status"] == "superseded"
    assert datetime.fromisoformat(data["valid_to"]) == NOW


def test_a_file_deleted_from_the_mirror_becomes_a_proposal_to_forget(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    (out / "entries/global/personalized/active/pref.reply-length.md").unlink()

    assert main(["import-markdown", str(out)]) == 0
    assert "1 proposal(s) to forget (files deleted)" in capsys.readouterr().out
    assert main(["import-markdown", str(out), "--json"]) == 0  # again: the same one proposal
    [filed] = json.loads(capsys.readouterr().out)["forget_proposals"]
    [proposal] = memory.proposals.list()
    assert proposal.id == filed and proposal.conflict_relation == "forget"
    assert proposal.memory_id == "pref.reply-length" and proposal.status == "pending"
    assert memory.memory.get("pref.reply-length") is not None  # nothing happens before approval

    assert main(["proposals", "approve", proposal.id]) == 0

    assert "approved: forgot pref.reply-length" in capsys.readouterr().out
    assert memory.memory.get("pref.reply-length") is None
    assert memory.proposals.list(None) == []  # the proposal, a copy of its text, went too
    assert memory.db.rows("SELECT count(*) FROM forget_log") == [(1,)]
    assert main(["import-markdown", str(out), "--json"]) == 0  # the manifest no longer lists it
    assert json.loads(capsys.readouterr().out)["forget_proposals"] == []


def test_a_proposal_to_forget_can_be_rejected_and_cannot_be_edited(memory, tmp_path, capsys):
    out = tmp_path / "mirror"
    export(out)
    (out / "entries/global/personalized/active/pref.reply-length.md").unlink()
    main(["import-markdown", str(out)])
    [proposal] = memory.proposals.list()

    assert main(["proposals", "approve", proposal.id, "--edit", "something else"]) == 1
    assert "cannot be edited" in capsys.readouterr().err
    review.reject(memory, proposal.id)

    assert memory.memory.get("pref.reply-length") is not None
