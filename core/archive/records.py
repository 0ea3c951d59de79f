"""The shape of a capture on its way in, and of the answer to a capture request."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from core.clock import to_utc_naive
from core.ids import new_id

# The longest message Elora archives, whether it arrives live or through an import (documents
# stop lower, at ELORA_MAX_DOCUMENT_CHARS). Past this a "message" is a dump: chunking it would
# bury the archive under thousands of chunks of one paste.
MAX_CAPTURE_CHARS = 2_000_000


def length_problem(text: str) -> str | None:
    """Why a message is too long to archive (the one rule for capture and import), or None."""
    if len(text) <= MAX_CAPTURE_CHARS:
        return None
    return f"{len(text):,} characters, over the {MAX_CAPTURE_CHARS:,}-character limit"


def reply_message_id(message_id: str) -> str:
    """The message id under which the answer to a message is archived (one per message: a
    message handled twice, e.g. replayed after a worker died, keeps one archived answer)."""
    return f"{message_id}:reply"


@dataclass
class CaptureIn:
    """A message or document as a surface received it; `id` is fixed before any write."""

    surface: str
    chat_id: str
    text: str
    sent_at: datetime
    user_id: str | None = None
    message_id: str | None = None
    sender: str | None = None
    role: str = "user"
    kind: str = "message"
    reply_to: str | None = None
    media: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)
    # Whether the operator said it: True, False (a contact, the assistant) or None (unknown).
    operator: bool | None = None
    # Why no job may learn from it (core.learning.consent); read from its words when not given.
    consent: str | None = None

    def __post_init__(self) -> None:
        self.chat_id = str(self.chat_id)
        self.sent_at = to_utc_naive(self.sent_at)
        if self.message_id is None:
            self.message_id = self.id
        self.message_id = str(self.message_id)
        if self.user_id is not None:
            self.user_id = str(self.user_id)
        if self.role != "user":
            self.operator = False
        elif self.consent is None:
            # Recorded with the message, so every later reader honours it without re-reading.
            from core.learning.consent import consent_of

            self.consent = consent_of(self.text)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (dates as ISO strings), as written to the spool."""
        data = asdict(self)
        data["sent_at"] = self.sent_at.isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaptureIn:
        """The inverse of to_json."""
        data = dict(data)
        data["sent_at"] = datetime.fromisoformat(data["sent_at"])
        return cls(**data)


@dataclass(frozen=True)
class CaptureResult:
    """Where a capture went: stored in the database, already there, or waiting in the spool."""

    id: str
    status: Literal["stored", "duplicate", "spooled"]
    indexed: bool = False
    # The chunks this capture created (empty unless stored), so a caller that deferred
    # indexing (`index=False`) can embed exactly these later.
    chunk_ids: tuple[str, ...] = ()

    @property
    def durable(self) -> bool:
        """A spooled capture is safe on disk but not durable until replayed."""
        return self.status != "spooled"
