"""Documents: captured verbatim, indexed into session memory, summarised for the model.

The model gets a file register (source_id, name, size, a map-reduce distillation) instead of the
whole file, and asks for details with search_session_context(source_id, query).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from core.archive.chunking import split_text
from core.archive.records import CaptureIn
from core.errors import EloraError, InvalidInput
from core.offload import run_blocking
from core.prompts import render

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {
    ".txt", ".md", ".markdown", ".csv", ".tsv", ".json", ".yaml", ".yml", ".xml", ".html",
    ".htm", ".log", ".ini", ".toml", ".py", ".js", ".ts", ".sql", ".sh", ".rst", ".tex", ".srt",
}  # fmt: skip
MAP_CHARS = 6000
MAX_MAP_CALLS = 8


class NoReadableText(InvalidInput):
    """The file has no text to read (a PDF of scanned images, an empty file)."""


@dataclass
class DocumentRegister:
    """What the model is told about a file: where to search it and what it is about."""

    source_id: str
    name: str
    size: int
    chars: int
    chunks: int
    distillation: str
    capture_id: str | None = None

    def render(self) -> str:
        """The register as text for the prompt (quoted data)."""
        return render("file_register", files=[self])

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return dict(self.__dict__)


def extract_text(name: str, data: bytes, max_chars: int) -> str:
    """Readable text of a file, or InvalidInput explaining why it can't be read."""
    suffix = PurePath(name).suffix.lower()
    if suffix == ".pdf" or data[:5] == b"%PDF-":
        text = _pdf_text(data)
    elif suffix in TEXT_SUFFIXES or not suffix:
        if b"\x00" in data[:4096]:
            raise InvalidInput(f"{name} looks like a binary file; send text, Markdown or PDF")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError:
                raise InvalidInput(f"{name} is not readable text (unknown encoding)") from None
    else:
        raise InvalidInput(f"{name}: {suffix} files are not supported; send text, Markdown or PDF")
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise NoReadableText(f"{name} contains no readable text")
    if len(text) > max_chars:
        raise InvalidInput(f"{name} has {len(text):,} characters; the limit is {max_chars:,}")
    return text


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
    except (PdfReadError, ValueError, KeyError) as exc:
        raise InvalidInput(f"the PDF could not be read ({exc})") from None
    except Exception as exc:  # a malformed PDF trips pypdf in many other ways (deep nesting…)
        raise InvalidInput(f"the PDF could not be read ({type(exc).__name__})") from None


async def ingest_document(
    services: Services,
    *,
    surface: str,
    chat_id: str,
    user_id: str,
    name: str,
    data: bytes,
    sent_at=None,
    message_id: str | None = None,
    caption: str | None = None,
    private: bool = False,
) -> DocumentRegister:
    """Capture a file verbatim (not in a private chat), index it in session memory and distil
    it (map-reduce). Extraction, capture and indexing run in a thread: the caller's event loop
    keeps serving other chats."""
    settings = services.settings
    if len(data) > settings.max_document_bytes:
        raise InvalidInput(
            f"{name} is {len(data) / 1e6:.1f} MB; the limit is {settings.max_document_bytes / 1e6:.0f} MB"
        )
    try:
        text = await run_blocking(extract_text, name, data, settings.max_document_chars)
    except NoReadableText:
        if not private:  # the environment tier learns which files keep arriving as scans
            from core.learning.environment import record_document_without_text

            await run_blocking(record_document_without_text, services, surface=surface,
                               chat_id=chat_id, name=name)  # fmt: skip
        raise
    now = services.clock.now()
    source_id = f"U{user_id}_C{chat_id}_T{int(now.timestamp())}"
    capture_id = None
    if not private:
        capture = CaptureIn(
            surface=surface, chat_id=chat_id, user_id=user_id, message_id=message_id,
            text=text, sent_at=sent_at or now, sender=None, role="user", kind="document",
            media={"file_name": name, "size": len(data), "caption": caption},
            provenance={"source_id": source_id}, operator=settings.is_operator(user_id),
        )  # fmt: skip
        capture_id = (await run_blocking(services.archive.capture, capture)).id
    save = services.session_memory.save
    chunks = await run_blocking(save, user_id, chat_id, source_id, text)
    distillation = await _distil(services, name, text)
    return DocumentRegister(source_id, name, len(data), len(text), chunks, distillation, capture_id)


async def _distil(services: Services, name: str, text: str) -> str:
    """Map: summarise parts; reduce: summarise the summaries. Without a model: the opening lines."""
    from core.routing.tiers import configured

    if not configured(services.settings):
        head = " ".join(text.split())[:600]
        return f"(no model configured; opening of the file) {head}"
    parts = split_text(text, MAP_CHARS, 200)
    if len(parts) > MAX_MAP_CALLS:  # keep cost bounded: sample evenly across the file
        step = len(parts) / MAX_MAP_CALLS
        parts = [parts[int(i * step)] for i in range(MAX_MAP_CALLS)]
    model = services.settings.model_distillation
    try:
        notes = []
        for n, part in enumerate(parts, start=1):
            prompt = render("document_map", name=name, part=part, number=n, total=len(parts))
            notes.append(
                await services.llm.complete_text(model, [{"role": "user", "content": prompt}])
            )
        if len(notes) == 1:
            return notes[0].strip()
        prompt = render("document_reduce", name=name, notes=notes)
        return (
            await services.llm.complete_text(model, [{"role": "user", "content": prompt}])
        ).strip()
    except EloraError as exc:
        log.warning("document distillation failed: %s", exc)
        return f"(summary unavailable: {exc}) " + " ".join(text.split())[:400]
