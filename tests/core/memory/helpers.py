"""Builders shared by the memory, recall and memory-CLI tests: a movable clock, valid entries,
realistic messages, a scripted text model and a byte search over an Elora home."""

from __future__ import annotations

import sqlite3
import unicodedata
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.archive.records import CaptureIn
from core.memory.schema import KIND_TO_TIER
from tests.databases import home_database_url, index_finds, server_files
from tests.fakes import FixedClock as BaseFixedClock

# A Saturday; "hier" is Friday 14 June, "last week" is Monday 3 to Sunday 9 June.
NOW = datetime(2024, 6, 15, 12, 0)


class FixedClock(BaseFixedClock):
    """Pinned to this module's NOW unless told otherwise."""

    def __init__(self, moment: datetime = NOW):
        super().__init__(moment)


def entry(memory_id: str, text: str, *, kind: str = "fact", **fields: Any) -> dict[str, Any]:
    """A complete, valid entry; any field can be overridden."""
    data: dict[str, Any] = {
        "memory_id": memory_id,
        "tier": KIND_TO_TIER[kind],
        "kind": kind,
        "canonical_text": text,
        "confidence": 0.9,
        "observations": 1,
        "topics": ["general"],
        "last_touched": NOW - timedelta(days=2),
    }
    data.update(fields)
    return data


def message(
    message_id: str,
    text: str,
    sent_at: datetime,
    *,
    chat_id: str = "42",
    sender: str = "Camille",
    role: str = "user",
    surface: str = "telegram",
) -> CaptureIn:
    """A Telegram message as the bot would capture it."""
    return CaptureIn(
        surface=surface,
        chat_id=chat_id,
        message_id=message_id,
        sender=sender,
        role=role,
        text=text,
        sent_at=sent_at,
        user_id="7",
    )


def source_of(capture: CaptureIn) -> dict[str, Any]:
    """An entry source pointing at an archived message."""
    return {
        "surface": capture.surface,
        "chat_id": capture.chat_id,
        "message_id": capture.message_id,
        "capture_id": capture.id,
        "date": capture.sent_at.isoformat(),
    }


def _variants(needle: str) -> set[bytes]:
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", needle) if not unicodedata.combining(c)
    )
    return {v.lower().encode("utf-8") for v in (needle, folded)}


def _stored_files(root: Path) -> list[tuple[str, Path]]:
    """(name, path) of every file under root and, when the home runs on PostgreSQL, of the
    server's files for its tables and indexes (named database/<relation>/<file>)."""
    files = [(str(p.relative_to(root)), p) for p in sorted(root.rglob("*")) if p.is_file()]
    url = home_database_url()
    if url:
        files += [(f"database/{rel}/{p.name}", p) for p, rel in server_files(url)]
    return files


def is_database(name: str) -> bool:
    """Whether a file named by files_containing/windows_on_disk is the database's."""
    return name.startswith(("elora.db", "database/"))


def database_name() -> str:
    """How the database's files are named once folded by as_stored: elora.db or database."""
    return "database" if home_database_url() else "elora.db"


def as_stored(name: str) -> str:
    """A file name with PostgreSQL's many relation files folded into "database"."""
    return "database" if name.startswith("database/") else name


def files_containing(root: Path, needle: str) -> list[str]:
    """Every file under root (and the database's, on a server) holding the needle,
    case-insensitively (FTS keeps folded tokens)."""
    wanted = _variants(needle)
    found = []
    for name, path in _stored_files(root):
        data = path.read_bytes().lower()
        if any(w in data for w in wanted):
            found.append(name)
    return found


def fts_terms(db_path: Path, words: set[str]) -> set[str]:
    """Which of these words the full-text indexes still hold: SQLite's three FTS5 indexes
    (read through fts5vocab), or PostgreSQL's search columns (asked with each word)."""
    url = home_database_url()
    if url:
        return index_finds(url, words)
    conn = sqlite3.connect(db_path)
    try:
        terms: set[str] = set()
        for fts in ("entries_fts", "captures_fts", "chunks_fts"):
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{fts} USING fts5vocab(main, {fts}, row)")
            terms |= {row[0] for row in conn.execute(f"SELECT term FROM temp.v_{fts}")}
        return terms & words
    finally:
        conn.close()


def windows_on_disk(root: Path, secret: str, width: int = 12) -> list[tuple[str, str]]:
    """Every (file, piece) where a `width`-character piece of the secret is still on disk under
    root (or in the database's files on a server): each window of the secret, as written and
    without accents, in any case (UTF-8)."""
    pieces = set()
    for variant in {secret, *{v.decode() for v in _variants(secret)}}:
        pieces |= {variant[i : i + width] for i in range(len(variant) - width + 1)}
    wanted = {p: p.lower().encode("utf-8") for p in pieces}
    found = []
    for name, path in _stored_files(root):
        data = path.read_bytes().lower()
        found += [(name, p) for p, w in wanted.items() if w in data]
    return found
