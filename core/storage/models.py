"""SQLModel tables; the DDL that creates them lives in migrations.py and a test keeps both equal."""

from __future__ import annotations

import json

from pydantic import NaiveDatetime
from sqlalchemy import Column, Text
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel


class JSONText(TypeDecorator):
    """A JSON value stored as its text, on SQLite and PostgreSQL alike, so that raw SQL reads
    the same text from both (PostgreSQL's json type would come back already parsed)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value, dialect):
        """Python value → JSON text (as SQLAlchemy's JSON type writes it)."""
        return None if value is None else json.dumps(value)

    def process_result_value(self, value, dialect):
        """JSON text → Python value."""
        return None if value is None else json.loads(value)


def _json(default_factory=list):
    return Field(default_factory=default_factory, sa_column=Column(JSONText, nullable=False))


class Capture(SQLModel, table=True):
    """One verbatim message or document, archived before any model sees it."""

    __tablename__ = "captures"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    surface: str
    user_id: str | None = None
    chat_id: str
    message_id: str
    sender: str | None = None
    role: str = "user"
    kind: str = "message"
    text: str = ""
    sent_at: NaiveDatetime
    captured_at: NaiveDatetime
    reply_to: str | None = None
    media: dict = _json(dict)
    provenance: dict = _json(dict)
    # Why no job may learn from this message (core.learning.consent); None: it may.
    consent: str | None = None
    # Whether the operator said it (None: not known yet, see core.archive.speakers).
    is_operator: bool | None = None


class Chunk(SQLModel, table=True):
    """A searchable piece of the archive: a window of short messages or a part of a long one."""

    __tablename__ = "chunks"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    kind: str  # message | window | part
    surface: str
    chat_id: str
    text: str
    message_ids: list = _json()
    speakers: list = _json()
    first_at: NaiveDatetime
    last_at: NaiveDatetime
    part: int = 0
    vector_state: str = "pending"  # pending | indexed | failed


class ChunkCapture(SQLModel, table=True):
    """Which captures a chunk covers (a window covers several, a part covers one)."""

    __tablename__ = "chunk_captures"
    chunk_rowid: int = Field(primary_key=True, foreign_key="chunks.rowid")
    capture_rowid: int = Field(primary_key=True, foreign_key="captures.rowid")


class TurnKey(SQLModel, table=True):
    """What one archived message means for search: dates it names, extra keys, its vector."""

    __tablename__ = "turn_keys"
    capture_rowid: int = Field(primary_key=True)
    chunk_rowid: int | None = None
    context_rowid: int | None = None  # the turn it answers (reply, else the previous message)
    dates: list = _json()
    keys: str = ""  # searchable words beyond the text: resolved dates, extracted facts
    facts: list = _json()  # short facts a model extracted from the message (fact_keys.py)
    asks: bool = False  # the turn hands the floor over with a question
    vector: bytes | None = None  # float16, the turn read with its context
    facts_at: NaiveDatetime | None = None  # when facts were extracted (none found counts)


class TurnDate(SQLModel, table=True):
    """A period an archived message names, resolved against when it was sent."""

    __tablename__ = "turn_dates"
    capture_rowid: int = Field(primary_key=True)
    start: NaiveDatetime = Field(primary_key=True)
    end: NaiveDatetime = Field(primary_key=True)


class ChatImport(SQLModel, table=True):
    """Who imported a chat (recall scopes: a user sees what they imported)."""

    __tablename__ = "chat_imports"
    surface: str = Field(primary_key=True)
    chat_id: str = Field(primary_key=True)
    imported_by: str = Field(primary_key=True)
    imported_at: NaiveDatetime


class MemoryEntry(SQLModel, table=True):
    """A maintained memory: the canon the operator approved."""

    __tablename__ = "memory_entries"
    rowid: int | None = Field(default=None, primary_key=True)
    uuid: str = Field(unique=True)
    memory_id: str = Field(unique=True)
    tier: str
    kind: str
    canonical_text: str
    embedding_text: str
    truth_mode: str = "asserted"
    scope: str = "global"
    importance: int = 1
    confidence: float
    observations: int
    topics: list = _json()
    valid_from: NaiveDatetime | None = None
    valid_to: NaiveDatetime | None = None
    status: str = "active"
    created_at: NaiveDatetime
    last_touched: NaiveDatetime
    sources: list = _json()
    attributes: dict = _json(dict)
    vector_state: str = "pending"


class EntryLink(SQLModel, table=True):
    """A typed relation between two entries (confirms, contradicts, supersedes, ...)."""

    __tablename__ = "entry_links"
    id: int | None = Field(default=None, primary_key=True)
    from_uuid: str
    to_uuid: str
    relation: str
    note: str | None = None
    created_at: NaiveDatetime


class EntryRecall(SQLModel, table=True):
    """How many evidence packs an entry reached, and when last (fading reads it)."""

    __tablename__ = "entry_recalls"
    uuid: str = Field(primary_key=True)
    recalls: int = 0
    last_recalled_at: NaiveDatetime | None = None


class Proposal(SQLModel, table=True):
    """A learning candidate waiting for the operator: approve, edit, reject or restore."""

    __tablename__ = "proposals"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    status: str = "pending"  # pending | recommended | approved | rejected
    authority: str = "model"  # model | operator | job
    origin: str = "extraction"
    memory_id: str | None = None
    tier: str
    kind: str
    text: str
    candidate: dict = _json(dict)
    scores: dict = _json(dict)
    total: float | None = None
    reasons: list = _json()
    source_capture_ids: list = _json()
    conflict_uuid: str | None = None
    conflict_relation: str | None = None
    created_at: NaiveDatetime
    decided_at: NaiveDatetime | None = None
    decision_note: str | None = None
    # Set while a surface writes its decision; the status stays open until it is written.
    claimed_at: NaiveDatetime | None = None


class Trace(SQLModel, table=True):
    """What happened for one request: classification, pack, models, tools, tokens, cost."""

    __tablename__ = "traces"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    surface: str
    chat_id: str | None = None
    capture_id: str | None = None
    classification: dict = _json(dict)
    pack: dict = _json(dict)
    models: list = _json()
    escalations: list = _json()
    tool_calls: list = _json()
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency_ms: int = 0
    error: str | None = None
    created_at: NaiveDatetime
    learning: dict = _json(dict)
    feedback: list = _json()


class Thread(SQLModel, table=True):
    """A persistent conversation: a chat window, an expert thread or a delegation."""

    __tablename__ = "threads"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    kind: str  # window | expert | subagent
    chat_id: str
    role: str | None = None
    messages: list = _json()
    summary: str | None = None
    created_at: NaiveDatetime
    updated_at: NaiveDatetime


class CapabilityDimension(SQLModel, table=True):
    """One dimension of the capability profile: p in [0, 1], updated by EMA from feedback."""

    __tablename__ = "capability_profile"
    dimension: str = Field(primary_key=True)
    p: float = 0.5
    samples: int = 0
    last_updated: NaiveDatetime


class SessionChunk(SQLModel, table=True):
    """A chunk of ephemeral session memory, partitioned by user, chat and source."""

    __tablename__ = "session_chunks"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    user_id: str
    chat_id: str
    source_id: str
    position: int = 0
    text: str
    created_at: NaiveDatetime
    expires_at: NaiveDatetime


class ForgetLog(SQLModel, table=True):
    """A record that something was forgotten: ids and time, never the content."""

    __tablename__ = "forget_log"
    id: int | None = Field(default=None, primary_key=True)
    entry_uuid: str  # the uuid, not the memory_id: a slug can carry words of the content
    with_sources: bool = False
    removed_captures: int = 0
    forgotten_at: NaiveDatetime
    matching: bool = False  # a forget by phrase ('' entry_uuid), never the phrase itself
    removed_entries: int = 0


class Tombstone(SQLModel, table=True):
    """A forgotten text, as a keyed hash of its normalised form (never the text itself)."""

    __tablename__ = "tombstones"
    digest: str = Field(primary_key=True)
    created_at: NaiveDatetime


class EntryVersion(SQLModel, table=True):
    """One state an entry was written in: its fields, the change, who and which surface."""

    __tablename__ = "entry_versions"
    id: int | None = Field(default=None, primary_key=True)
    entry_uuid: str
    version: int
    change: str  # create | approve | edit | confirm | superseded | restore | undo | ...
    surface: str = "system"
    actor: str | None = None
    data: dict = _json(dict)
    created_at: NaiveDatetime


class UndoAction(SQLModel, table=True):
    """An action that can be undone until expires_at (what to undo is in `data`)."""

    __tablename__ = "undo_actions"
    rowid: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    kind: str  # approve | remember | restore | forget
    target: str  # a proposal id, a memory_id, or (forget) an entry uuid
    surface: str = "system"
    actor: str | None = None
    entry_uuids: list = _json()
    data: dict = _json(dict)
    created_at: NaiveDatetime
    expires_at: NaiveDatetime
    undone_at: NaiveDatetime | None = None


class LearnedCapture(SQLModel, table=True):
    """A capture `elora learn` already ran extraction over (so reruns resume)."""

    __tablename__ = "learned_captures"
    capture_id: str = Field(primary_key=True)
    learned_at: NaiveDatetime


class HandledUpdate(SQLModel, table=True):
    """An update a surface (Telegram) already processed, so a restart never repeats it."""

    __tablename__ = "handled_updates"
    surface: str = Field(primary_key=True)
    update_id: int = Field(primary_key=True)
    handled_at: NaiveDatetime


class SurfaceMessage(SQLModel, table=True):
    """A reply a surface sent, mapped to the trace it came from (for feedback)."""

    __tablename__ = "surface_messages"
    surface: str = Field(primary_key=True)
    chat_id: str = Field(primary_key=True)
    message_id: str = Field(primary_key=True)
    trace_id: str | None = None
    created_at: NaiveDatetime


class ChatSetting(SQLModel, table=True):
    """A per-chat setting such as private mode."""

    __tablename__ = "chat_settings"
    surface: str = Field(primary_key=True)
    chat_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    value: str


class Meta(SQLModel, table=True):
    """Small key/value facts about the stores, such as which embedder made the vectors."""

    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str


class QueuedUpdate(SQLModel, table=True):
    """A received chat update waiting for (or leased by, or done by) one of several workers."""

    __tablename__ = "updates"
    surface: str = Field(primary_key=True)
    update_id: int = Field(primary_key=True)
    chat_key: str  # updates of one chat are processed one at a time, in update_id order
    payload: dict = _json(dict)
    state: str = "pending"  # pending | working | done | failed
    worker: str | None = None
    lease_until: NaiveDatetime | None = None
    attempts: int = 0
    received_at: NaiveDatetime
    replied_at: NaiveDatetime | None = None  # a reply went out: a replay must not answer again
    done_at: NaiveDatetime | None = None


class JobClaim(SQLModel, table=True):
    """The latest run of a scheduled job, claimed by one process so it runs once."""

    __tablename__ = "job_claims"
    name: str = Field(primary_key=True)
    started_at: NaiveDatetime
    worker: str
