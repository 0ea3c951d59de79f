"""Hostile exports through `elora import`: one clear line, and nothing of them written."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime

import pytest

from core.archive.records import MAX_CAPTURE_CHARS, CaptureIn, length_problem
from core.cli.main import main
from core.config import load_settings
from core.errors import InvalidInput
from core.services import Services
from tests.core.importers.helpers import rows, tg_chat, tg_export, tg_message

HUGE = 10_000_000
LIMIT_TEXT = f"{HUGE:,} characters, over the {MAX_CAPTURE_CHARS:,}-character limit"


@pytest.fixture
def small_batches(home, monkeypatch):
    """Imports commit every 2 captures: a late refusal would leave earlier batches behind."""
    monkeypatch.setenv("ELORA_IMPORT_BATCH_SIZE", "2")


def _archived(embedder) -> tuple[int, int]:
    services = Services(load_settings(), embedder=embedder)
    try:
        return (
            rows(services, "SELECT count(*) FROM captures")[0][0],
            rows(services, "SELECT count(*) FROM chunks")[0][0],
        )
    finally:
        services.close()


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def _with_huge_message(mid: int) -> dict:
    messages = [tg_message(n, f"message ordinaire {n}") for n in range(1, 6)]
    messages.insert(4, tg_message(mid, "x" * HUGE))  # after two full batches
    return tg_export(tg_chat(7, messages, name="Léa"))


def test_a_nesting_bomb_is_refused_in_one_line_and_writes_nothing(
    small_batches, tmp_path, embedder, capsys
):
    levels = 200_000
    bomb = tmp_path / "result.json"
    bomb.write_text('{"messages": ' + "[" * levels + "]" * levels + "}", encoding="utf-8")

    assert main(["import", str(bomb)]) == 1
    line = _one_error_line(capsys)

    assert line == (
        "elora: result.json: nested too deeply at line 1, column 77 (more than 64 levels); "
        "not a chat export, nothing was imported"
    )
    assert _archived(embedder) == (0, 0)


def test_nesting_the_decoder_survives_is_refused_with_its_position(
    small_batches, write_json, embedder, capsys
):
    deep: list | dict = "fin"
    for _ in range(300):
        deep = {"a": deep}
    messages = [tg_message(n) for n in range(1, 6)]
    messages.append(tg_message(6, poll=deep))
    path = write_json("result.json", tg_export(tg_chat(7, messages)))

    assert main(["import", str(path)]) == 1
    line = _one_error_line(capsys)

    assert line.startswith(
        "elora: result.json: nested too deeply at chats.list[0].messages[5].poll…"
    )
    assert _archived(embedder) == (0, 0)


def test_a_message_over_the_limit_refuses_the_export_before_anything_is_written(
    small_batches, write_json, embedder, capsys
):
    path = write_json("result.json", _with_huge_message(123))

    assert main(["import", str(path)]) == 1
    line = _one_error_line(capsys)

    assert line.startswith(f'elora: result.json: message 123 in chat "Léa" is {LIMIT_TEXT}')
    assert "nothing was imported" in line and "--skip-too-long" in line
    assert _archived(embedder) == (0, 0)


def test_skip_too_long_imports_the_rest_and_reports_what_it_left_out(
    small_batches, write_json, embedder, capsys
):
    path = write_json("result.json", _with_huge_message(123))

    assert main(["import", str(path), "--skip-too-long", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)

    assert report["stored"] == 5 and report["skipped_too_long"] == 1
    assert report["too_long"] == [f'result.json: message 123 in chat "Léa" ({LIMIT_TEXT})']
    assert _archived(embedder)[0] == 5
    services = Services(load_settings(), embedder=embedder)
    longest = rows(services, "SELECT max(length(text)) FROM captures")[0][0]
    services.close()
    assert longest < 100


def test_live_capture_and_import_apply_the_same_length_rule(services, write_json, capsys):
    just_over = "y" * (MAX_CAPTURE_CHARS + 1)
    item = CaptureIn(
        surface="telegram", chat_id="7", message_id="9", text=just_over, sent_at=datetime.now()
    )
    with pytest.raises(InvalidInput) as live:
        services.archive.capture(item)
    export = tg_export(tg_chat(7, [tg_message(9, just_over)], name="Léa"))

    assert main(["import", str(write_json("result.json", export))]) == 1
    imported = _one_error_line(capsys)

    rule = f"{MAX_CAPTURE_CHARS + 1:,} characters, over the {MAX_CAPTURE_CHARS:,}-character limit"
    assert str(live.value) == f"message 9 is {rule}"
    assert f'message 9 in chat "Léa" is {rule}' in imported
    assert length_problem("z" * MAX_CAPTURE_CHARS) is None  # exactly at the limit is fine


def test_a_chatgpt_message_over_the_limit_is_refused_too(home, write_json, embedder, capsys):
    conversation = {
        "id": "c1",
        "title": "Notes",
        "create_time": 1714550400,
        "current_node": "n2",
        "mapping": {
            "n0": {"id": "n0", "parent": None, "children": ["n1"], "message": None},
            "n1": {"id": "n1", "parent": "n0", "children": ["n2"], "message": {
                "id": "m1", "author": {"role": "user"}, "create_time": 1714550400,
                "content": {"content_type": "text", "parts": ["x" * HUGE]}}},
            "n2": {"id": "n2", "parent": "n1", "children": [], "message": {
                "id": "m2", "author": {"role": "assistant"}, "create_time": 1714550460,
                "content": {"content_type": "text", "parts": ["ok"]}}},
        },
    }  # fmt: skip
    path = write_json("conversations.json", [conversation])

    assert main(["import", str(path)]) == 1
    line = _one_error_line(capsys)

    assert line.startswith(f'elora: conversations.json: message m1 in chat "Notes" is {LIMIT_TEXT}')
    assert _archived(embedder) == (0, 0)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
         "elora: photo.png: looks like a binary file, not a JSON export"),
        ("result.json", "{\"messages\": [{\"text\": \"caf\xe9\"}]}".encode("latin-1"),
         "elora: result.json: not UTF-8 text (invalid byte at offset 27); expected a JSON export"),
        ("empty.json", b"",
         "elora: empty.json: invalid JSON at line 1, column 1: Expecting value"),
    ],
)  # fmt: skip
def test_files_that_are_not_exports_get_one_line(
    home, tmp_path, embedder, capsys, name, content, expected
):
    path = tmp_path / name
    path.write_bytes(content)

    assert main(["import", str(path)]) == 1

    assert _one_error_line(capsys) == expected
    assert _archived(embedder) == (0, 0)


def test_a_zip_holding_a_binary_result_json_names_the_member(home, tmp_path, embedder, capsys):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("Telegram Desktop/result.json", bytes(range(256)) * 16)
    path = tmp_path / "export.zip"
    path.write_bytes(buffer.getvalue())

    assert main(["import", str(path)]) == 1

    assert _one_error_line(capsys) == (
        "elora: export.zip/Telegram Desktop/result.json: looks like a binary file, "
        "not a JSON export"
    )
