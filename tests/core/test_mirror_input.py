"""`elora import-markdown` over hostile files: each is skipped with one line, the rest imports."""

from __future__ import annotations

import json

from core.cli.main import main
from core.config import load_settings
from core.memory.mirror import MAX_ENTRY_FILE_BYTES
from core.services import Services
from tests.core.learning.support import entry


def test_hostile_mirror_files_are_skipped_one_line_each_and_real_edits_still_propose(
    home, tmp_path, embedder, capsys
):
    services = Services(load_settings(), embedder=embedder)
    services.memory.save(entry("fact.home-lyon", "Camille lives in Lyon"))
    services.close()
    mirror = tmp_path / "mirror"
    assert main(["export-markdown", str(mirror)]) == 0
    [edited] = list((mirror / "entries").rglob("fact.home-lyon.md"))
    edited.write_text(edited.read_text().replace("Camille lives in Lyon", "Camille lives in Lille"))
    folder = edited.parent
    hostile = {
        "binary.md": bytes(range(128, 256)) * 8,
        "list.md": b"---\n- a\n- b\n---\n## canonical_text\nx\n",
        "deep.md": b"---\nimportance: " + b"[" * 20_000 + b"]" * 20_000 + b"\n---\nbody\n",
        "typed.md": b"---\nimportance: {a: 1}\n---\n## canonical_text\nhello there\n",
        "ids.md": b"---\nmemory_id: [1, 2]\n---\n## canonical_text\nhello there\n",
        "huge.md": b"---\nkind: fact\n---\n## canonical_text\n" + b"z" * MAX_ENTRY_FILE_BYTES,
    }
    for name, content in hostile.items():
        (folder / name).write_bytes(content)
    capsys.readouterr()

    assert main(["import-markdown", str(mirror), "--json"]) == 0
    captured = capsys.readouterr()
    outcome = json.loads(captured.out)

    assert len(outcome["proposals"]) == 1  # the real edit
    assert "Traceback" not in captured.err
    reasons = {error.split(": ", 1)[0].rsplit("/", 1)[-1]: error for error in outcome["errors"]}
    assert set(reasons) == set(hostile)
    assert "not UTF-8 text" in reasons["binary.md"]
    assert "not a mapping" in reasons["list.md"]
    assert "nested too deeply" in reasons["deep.md"]
    assert reasons["typed.md"].endswith("importance: Input should be a valid integer")
    assert "memory_id must be text" in reasons["ids.md"]
    assert "over the 1,000,000-byte limit" in reasons["huge.md"]
    assert all("\n" not in error for error in outcome["errors"])
