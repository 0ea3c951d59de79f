"""Running an import: read the exports, store captures in atomic batches, embed them, report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from core.archive import speakers
from core.archive.records import CaptureIn, length_problem
from core.errors import ImportFormatError, InvalidInput
from core.importers import chatgpt, telegram
from core.importers.limits import check_lengths, check_nesting
from core.importers.sources import FORMATS, ExportFile, Skipped, detect_format, read_exports
from core.storage.db import db_time

if TYPE_CHECKING:
    from core.services import Services

PARSERS: dict[str, ModuleType] = {"telegram": telegram, "chatgpt": chatgpt}
SKIPPED_FIELDS = {
    "service": "skipped_service",
    "empty": "skipped_empty",
    "branch": "skipped_branches",
    "too_long": "skipped_too_long",
}
# Chunks embedded per call: large enough to keep the model busy, small enough for a smooth bar.
INDEX_BATCH = 128


@dataclass
class ImportReport:
    """What an import did; `messages_seen` counts every record read, whatever became of it."""

    files: int = 0
    chats: int = 0
    messages_seen: int = 0
    stored: int = 0
    duplicates: int = 0
    skipped_service: int = 0
    skipped_empty: int = 0
    skipped_branches: int = 0
    skipped_too_long: int = 0
    too_long: list[str] = field(default_factory=list)
    chunks_created: int = 0
    chunks_indexed: int = 0
    chunks_pending: int = 0
    seconds: float = 0.0
    # Who the operator is among the senders, and how Elora knows (None: not known).
    operator: str | None = None

    @property
    def rate(self) -> float:
        """Message records handled per second, embedding included."""
        return self.messages_seen / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict, rate included."""
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        data["messages_per_second"] = round(self.rate, 1)
        return data

    def summary(self) -> str:
        """One line for the terminal."""
        line = (
            f"imported {self.stored:,} new messages from {self.files} file(s), {self.chats} chat(s): "
            f"{self.messages_seen:,} read, {self.duplicates:,} already archived, "
            f"{self.skipped_service + self.skipped_empty + self.skipped_branches:,} skipped; "
            f"{self.chunks_indexed:,} chunks indexed in {self.seconds:.1f} s "
            f"({self.rate:,.0f} messages/s)"
        )
        if self.chunks_pending:
            line += f"; {self.chunks_pending:,} chunks still wait for vectors (`elora reindex`)"
        if self.operator:
            line += f"; you are {self.operator}"
        elif self.operator is None and self.stored:
            line += (
                "; the operator was not identified among the senders (`--me NAME` or "
                "ELORA_OPERATOR_TELEGRAM_IDS): learning names every speaker"
            )
        if self.too_long:
            line += f"; left out as too long: {'; '.join(self.too_long)}"
        return line


@dataclass
class ImportPlan:
    """Decoded exports with their parser, counted before anything is written."""

    exports: list[tuple[ExportFile, ModuleType]] = field(default_factory=list)
    chats: int = 0
    total: int = 0
    load_seconds: float = 0.0
    # The operator's Telegram ids the exports revealed (owner, --me), and how.
    operator_ids: set[str] = field(default_factory=set)
    operator: str | None = None
    too_long: list[str] = field(default_factory=list)  # left out (--skip-too-long)


def prepare(
    paths: Iterable[Path | str],
    fmt: str = "auto",
    me: str | None = None,
    skip_too_long: bool = False,
) -> ImportPlan:
    """Read and check every export; raise ImportFormatError before anything is stored.

    `me` names the operator among a Telegram export's senders; without it the export's owner
    is found where the export tells it (see telegram.owner_ids). An export nested too deeply
    is refused; so is one holding a message over the archive's length limit, unless
    `skip_too_long` (such messages are then left out and reported).
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise ImportFormatError(f"unknown format {fmt!r}; expected auto, {', '.join(FORMATS)}")
    started = time.perf_counter()
    plan = ImportPlan()
    for export in read_exports([Path(p) for p in paths]):
        check_nesting(export.data, export.name)
        parser = PARSERS[detect_format(export.data, export.name) if fmt == "auto" else fmt]
        chats, records = parser.count(export.data, export.name)
        plan.too_long += check_lengths(parser, export.data, export.name, skip_too_long)
        plan.exports.append((export, parser))
        plan.chats += chats
        plan.total += records
    _find_operator(plan, me)
    plan.load_seconds = time.perf_counter() - started
    return plan


def _find_operator(plan: ImportPlan, me: str | None) -> None:
    """Who the operator is in the Telegram exports of the plan (ChatGPT's user always is)."""
    exports = [export.data for export, parser in plan.exports if parser is telegram]
    if me is not None and exports:
        named: dict[str, str] = {}
        for data in exports:
            named.update(telegram.ids_named(data, me))
        if not named:
            some = sorted({n for data in exports for n in telegram.senders(data)})
            raise InvalidInput(
                f"--me {me!r}: no sender of the export goes by that name"
                + (f" (senders include: {', '.join(some[:12])})" if some else "")
            )
        plan.operator_ids = set(named)
        plan.operator = f"{sorted(set(named.values()))[0]} (--me)"
        return
    for data in exports:
        owners = telegram.owner_ids(data)
        if owners:
            plan.operator_ids |= owners
            info = data.get("personal_information") or {}
            name = " ".join(filter(None, (info.get("first_name"), info.get("last_name"))))
            plan.operator = f"{name or 'user ' + ', '.join(sorted(owners))} (the export's owner)"


class _Batcher:
    """Collects captures; each full batch is stored in one transaction, then embedded."""

    def __init__(self, services: Services, report: ImportReport, on_progress):
        self.services = services
        self.archive = services.archive
        self.chats: set[tuple[str, str]] = set()  # (surface, chat id) seen, for chat_imports
        self.size = services.settings.import_batch_size
        self.report = report
        self.on_progress = on_progress or (lambda n: None)
        self.batch: list[CaptureIn] = []
        self.records = 0  # records read since the last flush, captures and skips alike

    def add(self, item: CaptureIn | Skipped) -> None:
        self.records += 1
        self.report.messages_seen += 1
        if isinstance(item, Skipped):
            attr = SKIPPED_FIELDS[item.reason]
            setattr(self.report, attr, getattr(self.report, attr) + 1)
        else:
            self.batch.append(item)
            self.chats.add((item.surface, item.chat_id))
        if len(self.batch) >= self.size:
            self.flush()

    def flush(self) -> None:
        if self.batch:
            new = self.archive.store_batch(self.batch, windows=True)
            self.report.stored += new
            self.report.duplicates += len(self.batch) - new
        self._index(self.records)
        self.batch, self.records = [], 0

    def _index(self, records: int) -> None:
        # The bar moves in messages: each embedded chunk stands for its share of the batch.
        pending = self.archive.counts()["chunks_pending_vectors"]
        state = {"done": 0, "shown": 0}

        def advance(chunks: int) -> None:
            state["done"] += chunks
            target = records * min(state["done"], pending) // max(pending, 1)
            self.on_progress(target - state["shown"])
            state["shown"] = target

        self.report.chunks_indexed += self.archive.index_pending(
            batch_size=INDEX_BATCH, on_progress=advance
        )
        if records > state["shown"]:
            self.on_progress(records - state["shown"])


def run(
    services: Services,
    plan: ImportPlan,
    on_progress: Callable[[int], None] | None = None,
    imported_by: str = "operator",
) -> ImportReport:
    """Import prepared exports; `on_progress(n)` tells that n more records are stored and embedded.

    `imported_by` is recorded for every chat (recall scopes: a user sees what they imported).

    Every record was read and checked by `prepare`, so a malformed one refuses the export
    before any batch is stored. Batches stored before an interruption (a crash, Ctrl-C) stay
    stored; since captures are unique by (surface, chat, message), running the import again
    resumes where it stopped.
    """
    started = time.perf_counter()
    report = ImportReport(files=len(plan.exports), chats=plan.chats, too_long=plan.too_long)
    chunks_before = services.archive.counts()["chunks"]
    batcher = _Batcher(services, report, on_progress)
    operator_ids = speakers.known_operator_ids(services) | plan.operator_ids
    try:
        for export, parser in plan.exports:
            for item in parser.parse(export.data, export.name):
                if isinstance(item, CaptureIn) and length_problem(item.text):
                    item = Skipped("too_long")  # refused in prepare unless --skip-too-long
                elif parser is telegram and isinstance(item, CaptureIn):
                    item.operator = speakers.is_operator_speaker(operator_ids, item.user_id)
                batcher.add(item)
        batcher.flush()
    except ImportFormatError as exc:
        _record_imports(services, batcher.chats, imported_by)
        if not report.stored:
            raise
        raise ImportFormatError(
            f"{exc} ({report.stored:,} new messages were archived before this point; "
            "fix the file and run the import again to resume)"
        ) from exc
    _record_imports(services, batcher.chats, imported_by)
    # Durable: later imports, `elora learn` and the bot know the operator from now on.
    speakers.record_operator_ids(services, plan.operator_ids)
    report.operator = plan.operator or _configured(services, plan, operator_ids)
    counts = services.archive.counts()
    report.chunks_created = counts["chunks"] - chunks_before
    report.chunks_pending = counts["chunks_pending_vectors"]
    report.seconds = plan.load_seconds + time.perf_counter() - started
    return report


def _record_imports(services: Services, chats: set[tuple[str, str]], imported_by: str) -> None:
    """Who imported which chats (core.recall.scope)."""
    if not chats:
        return
    now = db_time(services.clock.now())
    with services.db.session(write=True) as session:
        session.connection().exec_driver_sql(
            "INSERT INTO chat_imports (surface, chat_id, imported_by, imported_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(surface, chat_id, imported_by, now) for surface, chat_id in sorted(chats)],
        )


def _configured(services: Services, plan: ImportPlan, operator_ids: set[str]) -> str | None:
    """How the operator is known when the exports did not say (settings, an earlier import)."""
    if not any(parser is telegram for _, parser in plan.exports):
        return ""  # ChatGPT: the one who asked is the operator; nothing to say
    return (
        f"Telegram user {', '.join(sorted(operator_ids))} (already known)" if operator_ids else None
    )


def import_paths(
    services: Services,
    paths: Iterable[Path | str],
    fmt: str = "auto",
    on_progress: Callable[[int], None] | None = None,
    me: str | None = None,
    imported_by: str = "operator",
) -> ImportReport:
    """Prepare and run an import in one call."""
    return run(services, prepare(paths, fmt, me), on_progress, imported_by)
