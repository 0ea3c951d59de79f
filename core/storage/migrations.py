"""Numbered schema migrations, each recorded in `schema_migrations` once applied."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import Connection, text

if TYPE_CHECKING:
    from core.storage.db import Database

Migration = Callable[[Connection], None]
MIGRATIONS: list[tuple[int, str, Migration]] = []


def migration(version: int, name: str):
    """Register a migration function under its number."""

    def register(fn: Migration) -> Migration:
        MIGRATIONS.append((version, name, fn))
        return fn

    return register


def _run(conn: Connection, script: str) -> None:
    """Execute a script statement by statement (triggers contain semicolons of their own)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            conn.exec_driver_sql(pending.strip().rstrip(";"))
            pending = ""
    if pending.strip():
        conn.exec_driver_sql(pending)


@migration(1, "initial schema")
def m001_initial(conn: Connection) -> None:
    _run(
        conn,
        """
CREATE TABLE captures (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    surface TEXT NOT NULL,
    user_id TEXT,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    sender TEXT,
    role TEXT NOT NULL DEFAULT 'user',
    kind TEXT NOT NULL DEFAULT 'message',
    text TEXT NOT NULL DEFAULT '',
    sent_at DATETIME NOT NULL,
    captured_at DATETIME NOT NULL,
    reply_to TEXT,
    media JSON NOT NULL DEFAULT '{}',
    provenance JSON NOT NULL DEFAULT '{}',
    UNIQUE (surface, chat_id, message_id)
);
CREATE INDEX ix_captures_chat_sent ON captures (chat_id, sent_at);
CREATE INDEX ix_captures_sent ON captures (sent_at);
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    surface TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    text TEXT NOT NULL,
    message_ids JSON NOT NULL DEFAULT '[]',
    speakers JSON NOT NULL DEFAULT '[]',
    first_at DATETIME NOT NULL,
    last_at DATETIME NOT NULL,
    part INTEGER NOT NULL DEFAULT 0,
    vector_state TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX ix_chunks_chat_first ON chunks (chat_id, first_at);
CREATE INDEX ix_chunks_vector_state ON chunks (vector_state);
CREATE TABLE chunk_captures (
    chunk_rowid INTEGER NOT NULL REFERENCES chunks (rowid) ON DELETE CASCADE,
    capture_rowid INTEGER NOT NULL REFERENCES captures (rowid) ON DELETE CASCADE,
    PRIMARY KEY (capture_rowid, chunk_rowid)
);
CREATE INDEX ix_chunk_captures_chunk ON chunk_captures (chunk_rowid);
CREATE TABLE memory_entries (
    rowid INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    kind TEXT NOT NULL,
    canonical_text TEXT NOT NULL,
    embedding_text TEXT NOT NULL,
    truth_mode TEXT NOT NULL DEFAULT 'asserted',
    scope TEXT NOT NULL DEFAULT 'global',
    importance INTEGER NOT NULL DEFAULT 1,
    confidence REAL NOT NULL,
    observations INTEGER NOT NULL,
    topics JSON NOT NULL DEFAULT '[]',
    valid_from DATETIME,
    valid_to DATETIME,
    status TEXT NOT NULL DEFAULT 'active',
    created_at DATETIME NOT NULL,
    last_touched DATETIME NOT NULL,
    sources JSON NOT NULL DEFAULT '[]',
    attributes JSON NOT NULL DEFAULT '{}',
    vector_state TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX ix_entries_tier_status ON memory_entries (tier, status);
CREATE INDEX ix_entries_scope ON memory_entries (scope);
CREATE TABLE entry_links (
    id INTEGER PRIMARY KEY,
    from_uuid TEXT NOT NULL,
    to_uuid TEXT NOT NULL,
    relation TEXT NOT NULL,
    note TEXT,
    created_at DATETIME NOT NULL
);
CREATE INDEX ix_links_from ON entry_links (from_uuid);
CREATE INDEX ix_links_to ON entry_links (to_uuid);
CREATE TABLE proposals (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'pending',
    authority TEXT NOT NULL DEFAULT 'model',
    origin TEXT NOT NULL DEFAULT 'extraction',
    memory_id TEXT,
    tier TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    candidate JSON NOT NULL DEFAULT '{}',
    scores JSON NOT NULL DEFAULT '{}',
    total REAL,
    reasons JSON NOT NULL DEFAULT '[]',
    source_capture_ids JSON NOT NULL DEFAULT '[]',
    conflict_uuid TEXT,
    conflict_relation TEXT,
    created_at DATETIME NOT NULL,
    decided_at DATETIME,
    decision_note TEXT
);
CREATE INDEX ix_proposals_status ON proposals (status, created_at);
CREATE TABLE traces (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    surface TEXT NOT NULL,
    chat_id TEXT,
    capture_id TEXT,
    classification JSON NOT NULL DEFAULT '{}',
    pack JSON NOT NULL DEFAULT '{}',
    models JSON NOT NULL DEFAULT '[]',
    escalations JSON NOT NULL DEFAULT '[]',
    tool_calls JSON NOT NULL DEFAULT '[]',
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cost REAL,
    latency_ms INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at DATETIME NOT NULL
);
CREATE INDEX ix_traces_created ON traces (created_at);
CREATE TABLE threads (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    role TEXT,
    messages JSON NOT NULL DEFAULT '[]',
    summary TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX ix_threads_chat ON threads (chat_id, kind);
CREATE TABLE capability_profile (
    dimension TEXT PRIMARY KEY,
    p REAL NOT NULL DEFAULT 0.5,
    samples INTEGER NOT NULL DEFAULT 0,
    last_updated DATETIME NOT NULL
);
CREATE TABLE session_chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX ix_session_partition ON session_chunks (user_id, chat_id, source_id);
CREATE INDEX ix_session_expires ON session_chunks (expires_at);
CREATE TABLE forget_log (
    id INTEGER PRIMARY KEY,
    entry_uuid TEXT NOT NULL,
    with_sources BOOLEAN NOT NULL DEFAULT 0,
    removed_captures INTEGER NOT NULL DEFAULT 0,
    forgotten_at DATETIME NOT NULL
);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
""",
    )


@migration(2, "FTS5 indexes for captures, chunks and entries")
def m002_fts(conn: Connection) -> None:
    # External-content FTS5 tables kept in step by triggers: the text lives once, in the table.
    for table, fts, columns in (
        ("captures", "captures_fts", ("text", "sender")),
        ("chunks", "chunks_fts", ("text",)),
        ("memory_entries", "entries_fts", ("canonical_text", "memory_id", "topics")),
    ):
        cols = ", ".join(columns)
        new = ", ".join(f"new.{c}" for c in columns)
        old = ", ".join(f"old.{c}" for c in columns)
        _run(
            conn,
            f"""
CREATE VIRTUAL TABLE {fts} USING fts5({cols}, content='{table}', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN
    INSERT INTO {fts}(rowid, {cols}) VALUES (new.rowid, {new});
END;
CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN
    INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old});
END;
CREATE TRIGGER {fts}_au AFTER UPDATE OF {cols} ON {table} BEGIN
    INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old});
    INSERT INTO {fts}(rowid, {cols}) VALUES (new.rowid, {new});
END;
-- Rows written before this migration must be searchable too.
INSERT INTO {fts}({fts}) VALUES ('rebuild');
""",
        )


@migration(3, "learning: trace learning/feedback, learned captures")
def m003_learning(conn: Connection) -> None:
    _run(
        conn,
        """
ALTER TABLE traces ADD COLUMN learning JSON NOT NULL DEFAULT '{}';
ALTER TABLE traces ADD COLUMN feedback JSON NOT NULL DEFAULT '[]';
CREATE TABLE learned_captures (
    capture_id TEXT PRIMARY KEY,
    learned_at DATETIME NOT NULL
);
CREATE INDEX ix_proposals_memory_id ON proposals (memory_id);
""",
    )


@migration(4, "surfaces: handled Telegram updates, surface messages, chat settings")
def m004_surfaces(conn: Connection) -> None:
    _run(
        conn,
        """
CREATE TABLE handled_updates (
    surface TEXT NOT NULL,
    update_id INTEGER NOT NULL,
    handled_at DATETIME NOT NULL,
    PRIMARY KEY (surface, update_id)
);
CREATE TABLE surface_messages (
    surface TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    trace_id TEXT,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (surface, chat_id, message_id)
);
CREATE TABLE chat_settings (
    surface TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (surface, chat_id, key)
);
""",
    )


@migration(5, "recall indexes: entries by rank, chunks by date")
def m005_recall_indexes(conn: Connection) -> None:
    # The pack's L0/L1 manifest reads active entries in (importance, confidence, last_touched)
    # order and stops after a few dozen rows; time windows list the chunks of a period.
    _run(
        conn,
        """
CREATE INDEX ix_entries_rank ON memory_entries (status, importance, confidence, last_touched);
CREATE INDEX ix_chunks_first ON chunks (first_at);
""",
    )


@migration(6, "browsing index: entries by status and last touched")
def m006_browse_index(conn: Connection) -> None:
    # The cockpit and `elora memories` page through entries newest-touched first; without an
    # index every page sorts the whole table (about a second per page at 100k entries).
    _run(
        conn,
        """
CREATE INDEX ix_entries_status_touched ON memory_entries (status, last_touched);
CREATE INDEX ix_entries_touched ON memory_entries (last_touched);
""",
    )


@migration(7, "consent and speakers: captures.consent, captures.is_operator, tombstones")
def m007_consent_speakers(conn: Connection) -> None:
    # consent: why a message is material for no job (a consent instruction, or the source of a
    # forgotten entry); NULL when it may be learned from. is_operator: 1 the operator said it,
    # 0 a contact or the assistant, NULL not known yet (resolved once the operator is).
    _run(
        conn,
        """
ALTER TABLE captures ADD COLUMN consent TEXT;
ALTER TABLE captures ADD COLUMN is_operator INTEGER;
CREATE TABLE tombstones (
    digest TEXT PRIMARY KEY,
    created_at DATETIME NOT NULL
);
UPDATE captures SET is_operator = 0 WHERE role != 'user';
UPDATE captures SET is_operator = 1 WHERE role = 'user' AND surface IN ('cli', 'cockpit', 'chatgpt');
""",
    )
    from core.learning.consent import consent_of

    # Messages archived before this migration carry their consent instruction too.
    rows = conn.exec_driver_sql("SELECT rowid, text FROM captures WHERE role = 'user'").all()
    flagged = [(flag, rowid) for rowid, body in rows if (flag := consent_of(body)) is not None]
    if flagged:
        conn.exec_driver_sql("UPDATE captures SET consent = ? WHERE rowid = ?", flagged)


@migration(8, "forget log: forgets by phrase and how many entries they erased")
def m008_forget_log(conn: Connection) -> None:
    # `elora forget --matching` erases messages and entries by a phrase: its log row names no
    # entry (entry_uuid '') and never the phrase, only what kind of forget it was and counts.
    _run(
        conn,
        """
ALTER TABLE forget_log ADD COLUMN matching BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE forget_log ADD COLUMN removed_entries INTEGER NOT NULL DEFAULT 0;
""",
    )


@migration(9, "recall keys: turn keys, resolved dates, chat imports, captures by user")
def m009_recall_keys(conn: Connection) -> None:
    # One key per archived message: the dates it names (resolved against when it was sent),
    # extra searchable words (those dates, facts a model extracted) and a vector of the turn read
    # with the turn it answers. The text itself stays in `captures` (one copy to forget).
    _run(
        conn,
        """
CREATE TABLE turn_keys (
    capture_rowid INTEGER PRIMARY KEY,
    chunk_rowid INTEGER,
    context_rowid INTEGER,
    dates JSON NOT NULL DEFAULT '[]',
    keys TEXT NOT NULL DEFAULT '',
    facts JSON NOT NULL DEFAULT '[]',
    asks BOOLEAN NOT NULL DEFAULT 0,
    vector BLOB,
    facts_at DATETIME
);
CREATE INDEX ix_turn_keys_chunk ON turn_keys (chunk_rowid);
CREATE INDEX ix_turn_keys_context ON turn_keys (context_rowid);
CREATE TABLE turn_dates (
    capture_rowid INTEGER NOT NULL,
    start DATETIME NOT NULL,
    "end" DATETIME NOT NULL,
    PRIMARY KEY (capture_rowid, start, "end")
);
CREATE INDEX ix_turn_dates_start ON turn_dates (start);
CREATE VIRTUAL TABLE turn_keys_fts USING fts5(keys, content='turn_keys',
    content_rowid='capture_rowid', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER turn_keys_fts_ai AFTER INSERT ON turn_keys BEGIN
    INSERT INTO turn_keys_fts(rowid, keys) VALUES (new.capture_rowid, new.keys);
END;
CREATE TRIGGER turn_keys_fts_ad AFTER DELETE ON turn_keys BEGIN
    INSERT INTO turn_keys_fts(turn_keys_fts, rowid, keys) VALUES ('delete', old.capture_rowid, old.keys);
END;
CREATE TRIGGER turn_keys_fts_au AFTER UPDATE OF keys ON turn_keys BEGIN
    INSERT INTO turn_keys_fts(turn_keys_fts, rowid, keys) VALUES ('delete', old.capture_rowid, old.keys);
    INSERT INTO turn_keys_fts(rowid, keys) VALUES (new.capture_rowid, new.keys);
END;
-- A deleted message takes its key and dates with it, and the turns that were read with it
-- as context get a new vector (their chunk is embedded again).
CREATE TRIGGER captures_turn_keys_ad AFTER DELETE ON captures BEGIN
    DELETE FROM turn_keys WHERE capture_rowid = old.rowid;
    DELETE FROM turn_dates WHERE capture_rowid = old.rowid;
    UPDATE chunks SET vector_state = 'pending' WHERE rowid IN (
        SELECT chunk_rowid FROM turn_keys WHERE context_rowid = old.rowid);
    UPDATE turn_keys SET vector = NULL, context_rowid = NULL WHERE context_rowid = old.rowid;
END;
CREATE TABLE chat_imports (
    surface TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    imported_by TEXT NOT NULL,
    imported_at DATETIME NOT NULL,
    PRIMARY KEY (surface, chat_id, imported_by)
);
CREATE INDEX ix_captures_user_chat ON captures (user_id, chat_id);
-- How many messages hold each word: BM25 of the few candidates of a question is computed from
-- it (asking FTS5 for given rows scores every matching row).
CREATE VIRTUAL TABLE captures_vocab USING fts5vocab('captures_fts', 'row');
-- Messages archived before this release get their turn keys when their chunk is embedded
-- again (index-pending job, or `elora reindex`); their old vectors serve until then.
UPDATE chunks SET vector_state = 'pending' WHERE kind IN ('message', 'window');
""",
    )


@migration(12, "proposal claims: claimed_at instead of an 'approving' status")
def m012_proposal_claims(conn: Connection) -> None:
    # A decision in progress is a timed claim on a still-open proposal: a crash between the
    # claim and the decision used to strand it as 'approving', counted nowhere, forever.
    _run(
        conn,
        """
ALTER TABLE proposals ADD COLUMN claimed_at DATETIME;
UPDATE proposals SET status = 'pending' WHERE status = 'approving';
""",
    )


@migration(14, "memory over time: recall counts per entry")
def m014_entry_recalls(conn: Connection) -> None:
    # How often an entry reached a request's evidence pack, and when last: fading counts a
    # recall as a use that extends an entry's lifetime (core.memory.fading). Kept beside the
    # entry, not in it, so saving an entry never resets its count.
    _run(
        conn,
        """
CREATE TABLE entry_recalls (
    uuid TEXT PRIMARY KEY,
    recalls INTEGER NOT NULL DEFAULT 0,
    last_recalled_at DATETIME
);
""",
    )


@migration(16, "entry versions and the undo log")
def m016_versions_undo(conn: Connection) -> None:
    # entry_versions: every state an entry was written in (who, which surface, which change),
    # so `elora history` lists them and `elora restore --version N` brings one back. They are
    # copies of the entry's text: forgetting the entry erases them (core/memory/copies.py).
    # undo_actions: approvals, edits, remembers and restores that can be undone until
    # expires_at; `data` says how (versions before/after, links made, the proposal's state).
    # A forget's row names the entry's uuid only: its undo is held in one process's memory.
    _run(
        conn,
        """
CREATE TABLE entry_versions (
    id INTEGER PRIMARY KEY,
    entry_uuid TEXT NOT NULL,
    version INTEGER NOT NULL,
    change TEXT NOT NULL,
    surface TEXT NOT NULL DEFAULT 'system',
    actor TEXT,
    data JSON NOT NULL DEFAULT '{}',
    created_at DATETIME NOT NULL,
    UNIQUE (entry_uuid, version)
);
CREATE TABLE undo_actions (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    surface TEXT NOT NULL DEFAULT 'system',
    actor TEXT,
    entry_uuids JSON NOT NULL DEFAULT '[]',
    data JSON NOT NULL DEFAULT '{}',
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    undone_at DATETIME
);
CREATE INDEX ix_undo_actions_created ON undo_actions (created_at);
""",
    )


@migration(20, "recall index: entries of a tier by rank")
def m020_tier_rank(conn: Connection) -> None:
    # The pack reads a tier's active entries in rank order (L1's predictions: the environment
    # tier). Through ix_entries_rank alone, SQLite walks every active entry looking for the
    # tier (45 ms at 10k entries when the tier holds none); this index starts at the tier.
    # It covers what ix_entries_tier_status did.
    _run(
        conn,
        """
CREATE INDEX ix_entries_tier_rank ON memory_entries
    (tier, status, importance, confidence, last_touched);
DROP INDEX IF EXISTS ix_entries_tier_status;
""",
    )


def applied_versions(conn: Connection) -> set[int]:
    """Versions already recorded in the database."""
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DATETIME NOT NULL)"
    )
    return {row[0] for row in conn.exec_driver_sql("SELECT version FROM schema_migrations")}


def migrate(conn: Connection) -> list[int]:
    """Apply every pending migration in order, each in its own transaction; return them."""
    done = applied_versions(conn)
    conn.commit()
    applied = []
    pending = [m for m in sorted(MIGRATIONS, key=lambda m: m[0]) if m[0] not in done]
    if pending:
        # Each migration takes the write lock at BEGIN (IMMEDIATE, see core/storage/db.py) and
        # looks again: two processes starting on one home must not both apply it.
        conn = conn.execution_options(elora_immediate=True)
    for version, name, fn in pending:
        with conn.begin():
            if version in applied_versions(conn):
                continue
            fn(conn)
            conn.execute(
                text(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (:v, :n, :t)"
                ),
                {"v": version, "n": name, "t": datetime.now(UTC).replace(tzinfo=None)},
            )
        applied.append(version)
    return applied


def schema_version(db: Database) -> int | None:
    """The newest migration applied to a database."""
    stmt = sa.select(sa.func.max(sa.column("version"))).select_from(sa.table("schema_migrations"))
    with db.session() as session:
        return session.connection().execute(stmt).scalar_one()
