"""Helpers for the cockpit tests: a pinned clock, rows with known ids, waiting for workers,
and the text a user would read on the screen."""

from __future__ import annotations

import contextlib
import html
import io
import re
import time
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from textual.worker import WorkerCancelled, WorkerFailed

from core.archive.records import CaptureIn
from core.memory.schema import KIND_TO_TIER
from core.storage.db import run
from core.storage.models import Proposal
from tests.fakes import FixedClock as BaseFixedClock

# A Friday morning: proposals, entries and traces are dated from it.
NOW = datetime(2025, 3, 14, 9, 30)

# The API key the cockpit tests configure (the terminal test hands it to its subprocess too).
LLM_KEY = "test-key-123456"

FACTORS = {
    "future_utility": 0.9,
    "factual_confidence": 0.8,
    "semantic_novelty": 0.7,
    "temporal_recency": 0.6,
    "content_type_prior": 0.5,
    "environment_prediction_improvement": 0.4,
}


class FixedClock(BaseFixedClock):
    """Pinned to this module's NOW unless told otherwise."""

    def __init__(self, moment: datetime = NOW):
        super().__init__(moment)


# -- waiting -------------------------------------------------------------------------------


async def settle(pilot, rounds: int = 50) -> None:
    """Wait until no worker is running and the UI has processed what they posted.

    A finished worker often starts another (an approval reloads the list), so this loops until
    a pause leaves nothing running.
    """
    app = pilot.app
    for _ in range(rounds):
        running = [w for w in app.workers if not w.is_finished]
        if not running:
            await pilot.pause()
            if not [w for w in app.workers if not w.is_finished]:
                return
            continue
        # A failed worker becomes a notification on screen; tests assert on that.
        with contextlib.suppress(WorkerFailed, WorkerCancelled):
            await app.workers.wait_for_complete(running)
        await pilot.pause()
    raise AssertionError("workers kept running")


async def wait_until(pilot, predicate, timeout: float = 60.0, what: str = "condition") -> None:
    """Let the UI run until `predicate()` holds (while workers may still be busy), or fail
    after `timeout` seconds: for what arrives in the middle of a long job."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


# -- what is on screen ---------------------------------------------------------------------

_TEXT = re.compile(
    r'<text class="[^"]*-r\d+" x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>',
    re.S,
)
CELL = 12.2  # width of one terminal cell in Textual's SVG screenshots


def screen_lines(app) -> list[str]:
    """The screen as lines of text (read back from Textual's SVG screenshot)."""
    return svg_lines(app.export_screenshot())


def svg_lines(svg: str) -> list[str]:
    """The text rows of a Textual SVG screenshot, each segment placed at its own column."""
    rows: dict[float, list[tuple[int, str]]] = defaultdict(list)
    for x, y, _width, content in _TEXT.findall(svg):
        text = html.unescape(re.sub(r"<[^>]+>", "", content)).replace("\xa0", " ")
        rows[float(y)].append((round(float(x) / CELL), text))
    lines = []
    for _, parts in sorted(rows.items()):
        line = ""
        for column, text in sorted(parts):
            line = line.ljust(column) + text if len(line) < column else line + text
        lines.append(line.rstrip())
    return lines


def pane_text(widget, width: int = 300) -> str:
    """What a Static shows, rendered wide enough that nothing wraps (layout aside)."""
    from rich.console import Console
    from rich.text import Text

    content = widget.content
    if isinstance(content, str):
        content = Text.from_markup(content)
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(content)
    return console.export_text()


def screen_text(app) -> str:
    """The whole screen as one string."""
    return "\n".join(screen_lines(app))


def notifications(app, severity: str | None = None) -> list[str]:
    """Messages of the notifications currently shown (optionally of one severity)."""
    return [n.message for n in app._notifications if severity is None or n.severity == severity]


def table_keys(table) -> list[str]:
    """Row keys of a DataTable, top to bottom."""
    return [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]


# -- rows with known ids -------------------------------------------------------------------


def add_capture(services, text: str, *, message_id: str, sent_at: datetime = NOW) -> str:
    """Archive one operator message from Telegram; return its capture id."""
    item = CaptureIn(surface="telegram", chat_id="42", text=text, sent_at=sent_at, user_id="7",
                     sender="Camille", message_id=message_id, id=f"cap-{message_id}")  # fmt: skip
    return services.archive.capture(item, index=False).id


def add_proposal(
    services, proposal_id: str, text: str, *, kind: str = "preference", status: str = "pending",
    total: float = 3.9, **fields: Any,
) -> Proposal:  # fmt: skip
    """Store a proposal with a known id (the store would draw a random one)."""
    tier = fields.pop("tier", KIND_TO_TIER[kind])
    candidate = {"text": text, "kind": kind, "tier": tier, "scope": "global",
                 "topics": fields.pop("topics", ["food"]), "importance": 2, "confidence": 0.8,
                 "temporality": "permanent"}  # fmt: skip
    proposal = Proposal(
        id=proposal_id,
        status=status,
        authority=fields.pop("authority", "model"),
        origin=fields.pop("origin", "extraction"),
        tier=tier,
        kind=kind,
        text=text,
        candidate=candidate,
        scores=fields.pop("scores", FACTORS),
        total=total,
        reasons=fields.pop("reasons", [f"total {total:.2f}"]),
        created_at=fields.pop("created_at", NOW - timedelta(hours=1)),
        **fields,
    )
    with services.db.session() as session:
        session.add(proposal)
        session.flush()
        session.refresh(proposal)
        session.expunge(proposal)
    return proposal


SOURCE = {"surface": "telegram", "chat_id": "42", "message_id": "7001", "date": "2025-03-13T08:00"}


def entry(memory_id: str, text: str, *, kind: str = "fact", **fields: Any) -> dict[str, Any]:
    """A complete, valid memory entry; any field can be overridden."""
    data: dict[str, Any] = {
        "memory_id": memory_id,
        "tier": KIND_TO_TIER[kind],
        "kind": kind,
        "canonical_text": text,
        "confidence": 0.8,
        "observations": 1,
        "topics": ["general"],
        "last_touched": NOW - timedelta(days=1),
        "sources": [SOURCE],
    }
    data.update(fields)
    return data


def proposal_status(services, proposal_id: str) -> str:
    """The status of a proposal as stored right now."""
    return services.proposals.get(proposal_id).status


def bulk_entries(services, count: int, first: int = 0) -> None:
    """Insert entries `first` .. `first + count - 1` straight into SQLite (no vectors), newest
    touched first: `fact.bulk-000000` is the most recently touched."""
    from core.ids import memory_uuid
    from core.storage.db import db_time

    rows = []
    for i in range(first, first + count):
        memory_id = f"fact.bulk-{i:06d}"
        touched = db_time(NOW - timedelta(minutes=i))
        rows.append((memory_uuid(memory_id), memory_id, "semantic", "fact",
                     f"Bulk fact number {i}", f"Bulk fact number {i}", "asserted", "global", 1,
                     0.8, 1, '["bulk"]', "active", touched, touched, "[]", "{}", "indexed"))  # fmt: skip
    with services.db.session() as session:
        run(
            session.connection(),
            "INSERT INTO memory_entries (uuid, memory_id, tier, kind, canonical_text, "
            "embedding_text, truth_mode, scope, importance, confidence, observations, topics, "
            "status, created_at, last_touched, sources, attributes, vector_state) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
