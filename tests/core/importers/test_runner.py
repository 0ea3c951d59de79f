"""Imports are idempotent, resumable, and fail on malformed files with a position."""

from __future__ import annotations

import json
import zipfile

import pytest

from core.config import load_settings
from core.errors import ImportFormatError
from core.importers.runner import import_paths, prepare, run
from tests.core.importers.helpers import EXAMPLES, rows, tg_chat, tg_export, tg_message
from tests.fakes import BrokenEmbedder


def _counts(services) -> tuple[int, int, int]:
    counts = services.archive.counts()
    return counts["captures"], counts["chunks"], services.vectors.count("archive")


def test_reimporting_the_same_file_adds_nothing(services):
    path = EXAMPLES / "chatgpt" / "conversations.json"
    first = import_paths(services, [path])
    before = _counts(services)

    second = import_paths(services, [path])

    assert first.stored > 0
    assert second.stored == 0 and second.duplicates == first.stored
    assert second.chunks_created == 0
    assert _counts(services) == before


def test_progress_reaches_the_total_of_records(services, write_json):
    messages = [tg_message(i, f"message {i}") for i in range(1, 13)]
    messages.insert(3, {"id": 99, "type": "service", "date": "2024-03-01T10:00:00", "text": ""})
    plan = prepare([write_json("result.json", tg_export(tg_chat(1, messages)))])
    steps: list[int] = []

    report = run(services, plan, on_progress=steps.append)

    assert plan.total == 13 and sum(steps) == 13 and all(s >= 0 for s in steps)
    assert report.stored + report.skipped_service == report.messages_seen == 13


def test_invalid_json_names_line_and_column(services, tmp_path):
    path = tmp_path / "result.json"
    path.write_text('{\n "chats": {\n  "list": [,]\n }\n}\n', encoding="utf-8")

    with pytest.raises(ImportFormatError, match=r"result\.json: invalid JSON at line 3, column 12"):
        import_paths(services, [path])
    assert services.archive.counts()["captures"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (bytes(range(256)) * 4, "binary file"),
        ('{"name": "Léa"}'.encode("latin-1"), "not UTF-8"),
    ],
)
def test_binary_or_non_utf8_files_are_refused_clearly(services, tmp_path, content, message):
    path = tmp_path / "photo.jpg"
    path.write_bytes(content)

    with pytest.raises(ImportFormatError, match=f"photo.jpg: .*{message}"):
        import_paths(services, [path])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"hello": "world"}, "unknown format"),
        (
            tg_export({"name": "x", "type": "personal_chat", "id": 1, "messages": {}}),
            r"chats\.list\[0\]\.messages: expected a list",
        ),
        ([{"title": "no mapping"}], r"\[0\]: missing 'mapping'"),
    ],
)
def test_wrong_structure_is_refused_before_anything_is_stored(services, write_json, data, message):
    with pytest.raises(ImportFormatError, match=message):
        import_paths(services, [write_json("export.json", data)])
    assert services.archive.counts()["captures"] == 0


def test_a_malformed_message_anywhere_refuses_the_export_before_any_batch_is_stored(
    batch_services, write_json
):
    svc = batch_services
    good = tg_chat(1, [tg_message(i, f"premier chat {i}") for i in range(1, 4)])
    messages = [tg_message(i, f"second chat, message {i}") for i in range(1, 10)]
    del messages[7]["date_unixtime"], messages[7]["date"]
    path = write_json("result.json", tg_export(good, tg_chat(2, messages)))

    with pytest.raises(ImportFormatError) as failure:
        import_paths(svc, [path])

    # Records 1-10 would have made two full batches of 5: every record is read before any.
    assert str(failure.value) == "result.json: chats.list[1].messages[7]: missing 'date'"
    assert rows(svc, "SELECT count(*) FROM captures")[0][0] == 0

    messages[7]["date"] = "2024-03-09T10:08:00"
    write_json("result.json", tg_export(good, tg_chat(2, messages)))
    report = import_paths(svc, [path])
    again = import_paths(svc, [path])

    assert (report.stored, again.stored, again.duplicates) == (12, 0, 12)
    assert rows(
        svc, "SELECT count(*), count(DISTINCT chat_id || '/' || message_id) FROM captures"
    ) == [(12, 12)]


def test_a_zip_archive_is_read(services, tmp_path):
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(
            "export/conversations.json", (EXAMPLES / "chatgpt/conversations.json").read_text()
        )
        z.writestr("export/chat.html", "<html></html>")

    report = import_paths(services, [archive])

    assert report.files == 1 and report.stored > 0


def test_forcing_the_wrong_format_fails_with_a_position(services, write_json):
    path = write_json("result.json", tg_export(tg_chat(1, [tg_message(1)])))

    with pytest.raises(ImportFormatError, match="expected a list of conversations"):
        import_paths(services, [path], fmt="chatgpt")


def test_a_missing_path_is_an_import_error(services, tmp_path):
    with pytest.raises(ImportFormatError, match="no such file"):
        import_paths(services, [tmp_path / "nope.json"])


def test_report_json_is_serialisable(services, write_json):
    path = write_json("result.json", tg_export(tg_chat(1, [tg_message(1, "bonjour")])))

    data = json.loads(json.dumps(import_paths(services, [path]).to_json()))

    assert data["stored"] == 1 and data["messages_per_second"] > 0


def test_an_unreachable_embedder_leaves_chunks_pending_not_lost(home, embedder, write_json):
    from core.services import Services

    messages = [tg_message(i, f"note {i}") for i in range(1, 4)]
    path = write_json("result.json", tg_export(tg_chat(1, messages)))
    broken = Services(load_settings(), embedder=BrokenEmbedder())
    try:
        report = import_paths(broken, [path])
    finally:
        broken.close()

    assert report.stored == 3 and report.chunks_indexed == 0
    assert report.chunks_pending == report.chunks_created > 0
    assert "still wait for vectors" in report.summary()
    healthy = Services(load_settings(), embedder=embedder)
    try:
        assert healthy.archive.index_pending() == report.chunks_created
    finally:
        healthy.close()
