"""Finding every copy a forget must erase, store by store ("forget means every copy", as the
README's Forget section promises).

A copy is:
- an archived message that contains the phrase (the whole message is erased: the phrase is its
  content, and a message cut around it would still say it), whose facts read by a model (its
  turn key, core.archive.fact_keys) contain it, or that an entry named its source;
- a memory entry that contains the phrase, or whose every source message is erased (it was
  drawn from them alone); an entry with other sources stays;
- a proposal that contains the phrase, targets an erased entry, or cites an erased message;
- a session-memory source (a document, a distilled conversation) that contains the phrase or
  came from an erased document: all its chunks;
- a turn of a conversation window or an expert/sub-agent thread that contains the phrase or is
  an erased message, and a thread summary that contains it;
- in traces, every string that contains the phrase or names an erased entry, and what recall
  noted about an erased question (its `missing` words, the classifier's reasons);
- a recorded version of an erased entry, and an earlier version of another entry that
  contains the phrase (core/memory/versions.py);
- an undo-log row about an erased entry or proposal, or holding the phrase (core/undo/log.py).
Files under ELORA_HOME are found by `core.memory.home_files`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core import threads as thread_rows
from core.archive import captures as archive_rows
from core.archive import turns as turn_rows
from core.learning import proposals as proposal_rows
from core.memory import entries as entry_rows
from core.memory import session as session_rows
from core.memory import versions
from core.memory.matching import FORGOTTEN, Phrase, fold_for_match
from core.memory.trace_copies import RowRewrite, loads, trace_copies
from core.undo import log as undo_log

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from core.memory.home_files import FileCopy
    from core.services import Services

THREAD_SUMMARY_FORGOTTEN = "(part of this conversation was forgotten at the operator's request)"


@dataclass(frozen=True)
class Target:
    """What to forget: a phrase, one entry, or one entry with its messages."""

    phrase: Phrase | None  # the operator's phrase, or the named entry's text
    matching: bool = False  # the operator gave the phrase (`forget --matching`)
    memory_id: str | None = None
    entry_uuid: str | None = None
    with_sources: bool = False
    source_ids: tuple[str, ...] = ()  # the named entry's source messages (with_sources)

    @property
    def archive(self) -> bool:
        """Whether messages, windows, session memory and the spool are searched too."""
        return self.matching or self.with_sources


@dataclass(frozen=True)
class MessageCopy:
    """An archived message to erase (never its text)."""

    rowid: int
    capture_id: str
    surface: str
    chat_id: str
    sent_at: str
    role: str
    kind: str
    why: str  # contains | source


@dataclass(frozen=True)
class EntryCopy:
    """A memory entry to erase."""

    uuid: str
    memory_id: str
    why: str  # named | contains | derived


@dataclass(frozen=True)
class SessionCopy:
    """One session-memory source to erase, all its chunks."""

    user_id: str
    chat_id: str
    source_id: str
    chunk_ids: tuple[str, ...]


@dataclass
class ErasePlan:
    """Every copy found; `erase` applies it, the surfaces preview it."""

    target: Target
    messages: list[MessageCopy] = field(default_factory=list)
    entries: list[EntryCopy] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)
    sessions: list[SessionCopy] = field(default_factory=list)
    threads: list[RowRewrite] = field(default_factory=list)
    traces: list[RowRewrite] = field(default_factory=list)
    links: list[RowRewrite] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)  # entry_versions ids
    undo_actions: list[str] = field(default_factory=list)  # undo log ids
    files: list[FileCopy] = field(default_factory=list)

    @property
    def capture_ids(self) -> set[str]:
        """Ids of the messages to erase."""
        return {m.capture_id for m in self.messages}

    def is_empty(self) -> bool:
        """Nothing to erase anywhere."""
        return not (self.messages or self.entries or self.proposals or self.sessions
                    or self.threads or self.traces or self.links or self.versions
                    or self.undo_actions
                    or any(f.action != "left" for f in self.files))  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The plan as plain data: ids, chats, dates, paths and counts, never the text."""
        return {
            "messages": [
                {"capture_id": m.capture_id, "surface": m.surface, "chat_id": m.chat_id,
                 "date": m.sent_at, "role": m.role, "kind": m.kind, "why": m.why}
                for m in self.messages
            ],
            "entries": [{"memory_id": e.memory_id, "why": e.why} for e in self.entries],
            "proposals": list(self.proposals),
            "session_memory": [
                {"user_id": s.user_id, "chat_id": s.chat_id, "source_id": s.source_id,
                 "chunks": len(s.chunk_ids)}
                for s in self.sessions
            ],
            "threads": [t.what for t in self.threads],
            "traces": len(self.traces),
            "link_notes": len(self.links),
            "versions": len(self.versions),
            "undo_actions": len(self.undo_actions),
            "files": [f.to_json() for f in self.files],
        }  # fmt: skip


def source_capture_ids(sources: list[dict]) -> list[str]:
    """Capture ids named in an entry's sources."""
    return [s["capture_id"] for s in sources if isinstance(s, dict) and s.get("capture_id")]


def resolve_target(
    services: Services,
    *,
    phrase: str | None = None,
    memory_id: str | None = None,
    with_sources: bool = False,
) -> Target:
    """The Target of a forget by phrase, or of an entry (NotFound/InvalidInput otherwise)."""
    from core.errors import InvalidInput

    if phrase is not None:
        return Target(phrase=Phrase(phrase), matching=True)
    if memory_id is None:
        raise InvalidInput("say what to forget: a memory id or a phrase")
    entry = services.memory.require(memory_id)
    try:  # a very short text is no phrase to look for: the entry alone goes
        text = Phrase(entry.canonical_text)
    except InvalidInput:
        text = None
    return Target(
        phrase=text,
        memory_id=entry.memory_id,
        entry_uuid=entry.uuid,
        with_sources=with_sources,
        source_ids=tuple(source_capture_ids(entry.sources)) if with_sources else (),
    )


def find_copies(
    services: Services,
    *,
    phrase: str | None = None,
    memory_id: str | None = None,
    with_sources: bool = False,
) -> ErasePlan:
    """Every copy of a phrase (or of an entry, and with_sources of its messages), for preview."""
    from core.memory.home_files import find_files

    target = resolve_target(services, phrase=phrase, memory_id=memory_id, with_sources=with_sources)
    with services.db.session() as session:
        plan = scan_database(session.connection(), target)
    plan.files = find_files(services, plan)
    return plan


def scan_database(conn: Connection, target: Target) -> ErasePlan:
    """Find every copy in SQLite (read-only; `erase` runs it again inside its transaction)."""
    plan = ErasePlan(target)
    documents: set[str] = set()
    if target.archive:
        plan.messages, documents = _messages(conn, target)
    erased = plan.capture_ids
    plan.entries = _entries(conn, target, erased)
    plan.proposals = _proposals(conn, target, erased, {e.memory_id for e in plan.entries})
    plan.links = _link_notes(conn, target, {e.uuid for e in plan.entries})
    if target.archive:
        plan.sessions = _sessions(conn, target, documents)
        plan.threads = _threads(conn, target, erased)
    plan.traces = trace_copies(conn, target, erased, [e.memory_id for e in plan.entries])
    uuids = {e.uuid for e in plan.entries}
    plan.versions = _versions(conn, target, uuids)
    plan.undo_actions = _undo_rows(conn, target, uuids, set(plan.proposals))
    return plan


def _versions(conn: Connection, target: Target, erased_uuids: set[str]) -> list[int]:
    """Versions of erased entries; and earlier versions of kept entries holding the phrase (a
    kept entry's current version is the entry itself, which the forget keeps)."""
    found = []
    for vid, uuid, version, data, newest in versions.scan_versions(conn):
        if uuid in erased_uuids or (
            target.phrase is not None and version != newest and target.phrase.in_stored(data)
        ):
            found.append(vid)
    return found


def _undo_rows(
    conn: Connection, target: Target, erased_uuids: set[str], proposals: set[str]
) -> list[str]:
    """Undo-log rows about an erased entry or proposal, or holding the phrase."""
    found = []
    for action_id, uuids, data in undo_log.scan_actions(conn):
        named = set(loads(uuids, []) or [])
        decided = {p.get("id") for p in (loads(data, {}) or {}).get("proposals", [])
                   if isinstance(p, dict)}  # fmt: skip
        if (
            named & erased_uuids
            or decided & proposals
            or (target.phrase is not None and target.phrase.in_stored(data))
        ):
            found.append(action_id)
    return found


def _messages(conn: Connection, target: Target) -> tuple[list[MessageCopy], set[str]]:
    """Messages that contain the phrase or are the named entry's sources; and the session
    source ids of the documents among them."""
    phrase, sources = target.phrase, set(target.source_ids)
    found, documents = [], set()
    facts_of = turn_rows.stored_facts(conn)  # what a model read in a message is a copy too
    rows = archive_rows.scan_messages(conn)
    for rowid, cid, surface, chat, sent, role, kind, sender, text, media, provenance in rows:
        facts = facts_of.get(rowid)
        if cid in sources:
            why = "source"
        elif phrase is not None and _message_holds(phrase, text, sender, media, provenance, facts):
            why = "contains"
        else:
            continue
        found.append(MessageCopy(rowid, cid, surface, chat, str(sent)[:16], role, kind, why))
        if kind == "document":
            source_id = (loads(provenance, {}) or {}).get("source_id")
            if source_id:
                documents.add(str(source_id))
    return found, documents


def _message_holds(phrase: Phrase, text, sender, media, provenance, facts=None) -> bool:
    """Whether a message's text, sender, attachment, provenance or extracted facts hold the
    phrase (folded once for the whole row: reading the archive is most of a forget's time)."""
    stored = (text, sender, media, provenance, facts)
    row = "\n".join(v for v in stored if v and v not in ("{}", "[]"))
    if "\\" not in row and phrase.folded not in fold_for_match(row):
        return False
    return (
        phrase.in_text(text) or phrase.in_text(sender)
        or phrase.in_stored(media) or phrase.in_stored(provenance) or phrase.in_stored(facts)
    )  # fmt: skip


def _entries(conn: Connection, target: Target, erased: set[str]) -> list[EntryCopy]:
    found = []
    rows = entry_rows.scan_entries(conn)
    for uuid, memory_id, canonical, embedded, attributes, sources in rows:
        if uuid == target.entry_uuid:
            why = "named"
        elif target.matching and (
            target.phrase.in_text(canonical) or target.phrase.in_text(embedded)
            or target.phrase.in_stored(attributes) or target.phrase.in_stored(sources)
        ):  # fmt: skip
            why = "contains"
        elif erased and "capture_id" in (sources or "") and _all_erased(sources, erased):
            why = "derived"
        else:
            continue
        found.append(EntryCopy(uuid, memory_id, why))
    return found


def _all_erased(sources: Any, erased: set[str]) -> bool:
    """Whether an entry cites messages and every one of them is erased."""
    cited = source_capture_ids(loads(sources, []) or [])
    return bool(cited) and set(cited) <= erased


def _proposals(conn: Connection, target: Target, erased: set[str], entries: set[str]) -> list[str]:
    phrase, found = target.phrase, []
    rows = proposal_rows.scan_proposals(conn)
    for pid, memory_id, text, candidate, reasons, note, cited in rows:
        if (
            memory_id in entries
            or (erased and cited not in (None, "[]") and erased & set(loads(cited, []) or []))
            or (phrase is not None and (
                phrase.in_text(text) or phrase.in_stored(candidate)
                or phrase.in_stored(reasons) or phrase.in_text(note)
            ))
        ):  # fmt: skip
            found.append(pid)
    return found


def _link_notes(conn: Connection, target: Target, erased_uuids: set[str]) -> list[RowRewrite]:
    if target.phrase is None:
        return []
    rows = entry_rows.scan_link_notes(conn)
    return [
        RowRewrite("entry_links", rowid, {"note": None}, "link note")
        for rowid, a, b, note in rows
        if a not in erased_uuids and b not in erased_uuids and target.phrase.in_text(note)
    ]


def _merged(texts: list[str], least: int = 20) -> str:
    """Folded text of a source's chunks with each overlap kept once, so that a phrase cut
    across two overlapping chunks is found too (chunks that do not overlap are joined by a
    space)."""
    parts: list[str] = []
    tail = ""
    for text in (fold_for_match(t) for t in texts):
        overlap = 0
        if len(text) >= least:
            head, start = text[:least], max(0, len(tail) - len(text))
            at = tail.find(head, start)
            while at != -1:
                if text.startswith(tail[at:]):
                    overlap = len(tail) - at
                    break
                at = tail.find(head, at + 1)
        piece = text[overlap:] if overlap else (" " + text if parts else text)
        parts.append(piece)
        tail = (tail + piece)[-2 * len(text) - least :]
    return "".join(parts)


def _sessions(conn: Connection, target: Target, documents: set[str]) -> list[SessionCopy]:
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    rows = session_rows.scan_session_chunks(conn)
    for user_id, chat_id, source_id, chunk, text in rows:
        groups.setdefault((user_id, chat_id, source_id), []).append((chunk, text))
    found = []
    for (user_id, chat_id, source_id), chunks in groups.items():
        hit = source_id in documents or (
            target.phrase is not None and target.phrase.folded in _merged([t for _, t in chunks])
        )
        if hit:
            found.append(SessionCopy(user_id, chat_id, source_id, tuple(c for c, _ in chunks)))
    return found


def _threads(conn: Connection, target: Target, erased: set[str]) -> list[RowRewrite]:
    phrase, found = target.phrase, []
    rows = thread_rows.scan_threads(conn)
    for rowid, thread_id, kind, messages, summary, role in rows:
        turns = loads(messages, []) or []
        kept = [
            t for t in turns
            if not (isinstance(t, dict) and t.get("capture_id") in erased)
            and not (phrase is not None and phrase.in_json(t))
        ]  # fmt: skip
        values: dict[str, Any] = {}
        if len(kept) != len(turns):
            values["messages"] = kept
        if phrase is not None and phrase.in_text(summary):
            values["summary"] = THREAD_SUMMARY_FORGOTTEN
        if phrase is not None and phrase.in_text(role):
            values["role"] = FORGOTTEN
        if values:
            dropped = len(turns) - len(kept)
            what = f"{kind} {thread_id}: {dropped} turn(s)" + (
                ", summary" if "summary" in values else ""
            )
            found.append(RowRewrite("threads", rowid, values, what))
    return found
