"""Cutting the archive into searchable chunks: windows of short messages, parts of long ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.archive.records import CaptureIn
from core.ids import chunk_id


@dataclass(frozen=True)
class ChunkSizes:
    """How the archive cuts messages into searchable chunks (from the settings)."""

    window_messages: int  # short messages of one conversation joined, at most this many
    window_chars: int  # …and this long
    window_gap: timedelta  # a pause this long starts a new window
    chunk_chars: int  # a long message is cut into parts this long
    overlap: int  # parts overlap by this many characters


@dataclass
class ChunkPlan:
    """A chunk to write: its text and the captures it covers."""

    id: str
    kind: str
    surface: str
    chat_id: str
    text: str
    first_at: datetime
    last_at: datetime
    capture_ids: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)
    part: int = 0


def _line(capture: CaptureIn) -> str:
    who = capture.sender or capture.role
    return f"{who}: {capture.text}" if who else capture.text


def split_text(text: str, size: int, overlap: int) -> list[str]:
    """Cut long text into overlapping parts, preferring paragraph, line and sentence breaks."""
    if len(text) <= size:
        return [text]
    parts: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            for sep in ("\n\n", "\n", ". ", " "):
                cut = window.rfind(sep)
                if cut > size // 2:
                    end = start + cut + len(sep)
                    break
        parts.append(text[start:end].strip())
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return [p for p in parts if p]


def single_chunks(capture: CaptureIn, size: int, overlap: int) -> list[ChunkPlan]:
    """One chunk for a capture, or several parts when it is long."""
    pieces = split_text(capture.text, size, overlap) if capture.text else []
    kind = "part" if len(pieces) > 1 else "message"
    return [
        ChunkPlan(
            id=chunk_id(capture.id, n),
            kind=kind,
            surface=capture.surface,
            chat_id=capture.chat_id,
            text=_line(capture) if kind == "message" else piece,
            first_at=capture.sent_at,
            last_at=capture.sent_at,
            capture_ids=[capture.id],
            message_ids=[capture.message_id],
            speakers=[capture.sender] if capture.sender else [],
            part=n,
        )
        for n, piece in enumerate(pieces)
    ]


def plan_chunks(
    captures: list[CaptureIn],
    *,
    window_messages: int,
    window_chars: int,
    window_gap: timedelta,
    chunk_chars: int,
    overlap: int,
) -> list[ChunkPlan]:
    """Group consecutive short messages of a chat into windows; split long ones into parts.

    Windows keep speakers and order, so one vector covers a short exchange: that is what makes
    importing large histories affordable on a CPU (one embedding per window, not per message).
    """
    plans: list[ChunkPlan] = []
    ordered = sorted(captures, key=lambda c: (c.surface, c.chat_id, c.sent_at, c.message_id))
    window: list[CaptureIn] = []
    size = 0

    def flush() -> None:
        nonlocal window, size
        if not window:
            return
        if len(window) == 1:
            plans.extend(single_chunks(window[0], chunk_chars, overlap))
        else:
            speakers = list(dict.fromkeys(c.sender for c in window if c.sender))
            plans.append(
                ChunkPlan(
                    id=chunk_id(window[0].id, 0),
                    kind="window",
                    surface=window[0].surface,
                    chat_id=window[0].chat_id,
                    text="\n".join(_line(c) for c in window),
                    first_at=window[0].sent_at,
                    last_at=window[-1].sent_at,
                    capture_ids=[c.id for c in window],
                    message_ids=[c.message_id for c in window],
                    speakers=speakers,
                )
            )
        window, size = [], 0

    for capture in ordered:
        if not capture.text.strip():
            flush()
            continue
        line = len(_line(capture))
        fits = (
            window
            and window[-1].chat_id == capture.chat_id
            and window[-1].surface == capture.surface
            and capture.sent_at - window[-1].sent_at <= window_gap
            and len(window) < window_messages
            and size + line <= window_chars
        )
        if not fits:
            flush()
        if line > window_chars:
            plans.extend(single_chunks(capture, chunk_chars, overlap))
            continue
        window.append(capture)
        size += line + 1
    flush()
    return plans
