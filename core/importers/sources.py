"""Export files on their way in: finding them, decoding their JSON, telling their format apart."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.errors import ImportFormatError
from core.importers.limits import too_deep_in_text

FORMATS = ("telegram", "chatgpt")
# The file each exporter writes, in the order a directory or a zip archive is searched.
KNOWN_NAMES = ("result.json", "conversations.json")


@dataclass(frozen=True)
class ExportFile:
    """One decoded export: the name to report in errors and provenance, and its JSON value."""

    name: str
    data: Any


@dataclass(frozen=True)
class Skipped:
    """A record of an export that is deliberately not archived, and why."""

    reason: Literal["service", "empty", "branch", "too_long"]


def problem(source: str, position: str, message: str) -> ImportFormatError:
    """The error for a structurally wrong export, naming the file and the position in it."""
    where = f"{source}: {position}" if position else source
    return ImportFormatError(f"{where}: {message}")


def required(record: dict, key: str, source: str, position: str) -> Any:
    """A required key of a record, or an ImportFormatError naming where it is missing."""
    if not isinstance(record, dict):
        raise problem(source, position, f"expected an object, found {type(record).__name__}")
    if key not in record or record[key] is None:
        raise problem(source, position, f"missing '{key}'")
    return record[key]


def decode_json(raw: bytes, name: str) -> Any:
    """Parse export bytes; binary, non-UTF-8 and invalid JSON become one clear ImportFormatError."""
    if b"\x00" in raw[:4096]:
        raise ImportFormatError(f"{name}: looks like a binary file, not a JSON export")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(
            f"{name}: not UTF-8 text (invalid byte at offset {exc.start}); expected a JSON export"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:  # json's decoder recurses once per level: a nesting bomb
        raise too_deep_in_text(text, name) from None


def detect_format(data: Any, name: str) -> str:
    """`telegram` or `chatgpt`, from the shape of the top-level JSON value."""
    if isinstance(data, list):
        return "chatgpt"
    if isinstance(data, dict) and ("chats" in data or "messages" in data):
        return "telegram"
    raise ImportFormatError(
        f"{name}: unknown format; expected a Telegram Desktop export (result.json) "
        "or a ChatGPT conversations.json"
    )


def _from_zip(path: Path) -> ExportFile:
    with zipfile.ZipFile(path) as archive:
        members = {Path(m).name: m for m in archive.namelist() if not m.endswith("/")}
        for wanted in KNOWN_NAMES:
            if wanted in members:
                member = members[wanted]
                return ExportFile(
                    f"{path.name}/{member}",
                    decode_json(archive.read(member), f"{path.name}/{member}"),
                )
    raise ImportFormatError(f"{path.name}: the zip archive holds no {' or '.join(KNOWN_NAMES)}")


def _resolve(path: Path) -> Path:
    if not path.is_dir():
        return path
    for wanted in KNOWN_NAMES:
        if (path / wanted).is_file():
            return path / wanted
    raise ImportFormatError(f"{path}: the directory holds no {' or '.join(KNOWN_NAMES)}")


def read_exports(paths: list[Path]) -> Iterator[ExportFile]:
    """Each export named by a path: a JSON file, a directory holding one, or a zip archive."""
    for given in paths:
        path = _resolve(Path(given))
        if not path.exists():
            raise ImportFormatError(f"{path}: no such file or directory")
        if zipfile.is_zipfile(path):
            yield _from_zip(path)
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ImportFormatError(f"{path}: cannot be read: {exc.strerror}") from exc
        yield ExportFile(path.name, decode_json(raw, path.name))
