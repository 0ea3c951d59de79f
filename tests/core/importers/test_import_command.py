"""`elora import` end to end: exit codes, the summary line, --json, errors on stderr."""

from __future__ import annotations

import json

from core.cli.main import main
from tests.core.importers.helpers import EXAMPLES


def test_import_prints_a_summary_then_json_for_the_rerun(home, capsys):
    path = str(EXAMPLES / "chatgpt" / "conversations.json")

    assert main(["import", path]) == 0
    summary = capsys.readouterr().out.strip().splitlines()

    assert len(summary) == 1
    assert summary[0].startswith("imported ") and "messages/s" in summary[0]
    assert main(["import", path, "--format", "chatgpt", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    first_stored = int(summary[0].split()[1])
    assert first_stored > 0
    assert report["stored"] == 0 and report["duplicates"] == first_stored
    assert report["chunks_pending"] == 0


def test_import_of_a_broken_file_exits_1_with_one_clear_line(home, tmp_path, capsys):
    broken = tmp_path / "result.json"
    broken.write_text('{"chats": {"list": [}', encoding="utf-8")

    assert main(["import", str(broken)]) == 1
    err = capsys.readouterr().err.strip()

    assert err == "elora: result.json: invalid JSON at line 1, column 21: Expecting value"
