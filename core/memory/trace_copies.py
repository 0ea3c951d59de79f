"""Copies in traces: every string that holds the phrase or names an erased memory (a slug may
carry words of its text), and what a trace noted about an erased question in its own words
(recall's `missing` subjects, the classifier's reasons and the period it read). Costs,
timings, models and other numbers stay: they are the spend and the audit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.memory.matching import FORGOTTEN
from core.traces import TRACE_JSON, scan_traces

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from core.memory.copies import Target


@dataclass
class RowRewrite:
    """New values for some columns of one row (JSON columns as Python values)."""

    table: str
    rowid: int
    values: dict[str, Any] = field(default_factory=dict)
    what: str = ""


def loads(value: Any, default: Any) -> Any:
    """A stored JSON column as a Python value (text that is not JSON stays text)."""
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _id_pattern(memory_ids: list[str]) -> re.Pattern | None:
    """Forgotten memory ids as whole slugs (a slug may carry words of the text)."""
    if not memory_ids:
        return None
    alternatives = "|".join(re.escape(m) for m in sorted(memory_ids, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9._:-])(?:{alternatives})(?![a-z0-9._:-])")


def _sub_ids(value: Any, ids: re.Pattern) -> Any:
    if isinstance(value, str):
        return ids.sub(FORGOTTEN, value)
    if isinstance(value, dict):
        return {k: _sub_ids(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_sub_ids(v, ids) for v in value]
    return value


def _forget_question(column: str, value: Any) -> Any:
    """What a trace noted about an erased question in its own words: recall's `missing`
    subjects, the classifier's reasons and the period it read."""
    if column == "pack" and isinstance(value, dict) and value.get("missing"):
        return {**value, "missing": []}
    if column == "classification" and isinstance(value, dict):
        cleaned = dict(value)
        if cleaned.get("reasons"):
            cleaned["reasons"] = []
        if cleaned.get("time_window"):
            cleaned["time_window"] = None
        return cleaned
    return value


def trace_copies(
    conn: Connection, target: Target, erased: set[str], memory_ids: list[str]
) -> list[RowRewrite]:
    phrase, ids, found = target.phrase, _id_pattern(memory_ids), []
    rows = scan_traces(conn)
    for rowid, capture_id, error, *stored in rows:
        values: dict[str, Any] = {}
        asked = bool(capture_id) and capture_id in erased
        for column, raw in zip(TRACE_JSON, stored, strict=True):
            if (
                not asked
                and not (ids is not None and isinstance(raw, str) and ids.search(raw))
                and not (phrase is not None and phrase.in_stored(raw))
            ):
                continue  # nothing of the forget in this column (checked on its stored text)
            before = loads(raw, None)
            after = before
            if asked:
                after = _forget_question(column, after)
            if ids is not None:
                after = _sub_ids(after, ids)
            if phrase is not None:
                after = phrase.scrub(after)
            if after != before:
                values[column] = after
        scrubbed = error
        if ids is not None and scrubbed:
            scrubbed = ids.sub(FORGOTTEN, scrubbed)
        if phrase is not None and phrase.in_text(scrubbed):
            scrubbed = FORGOTTEN
        if scrubbed != error:
            values["error"] = scrubbed
        if values:
            found.append(RowRewrite("traces", rowid, values, ", ".join(values)))
    return found
