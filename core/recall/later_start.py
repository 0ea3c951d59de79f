"""Where later messages start: the smallest rowid among the messages sent at or after a moment.

An update's word search (turn_search.later_by_words) tells FTS5 to skip every row before it.
SQLite answers `min(rowid) WHERE sent_at >= ?` by walking the date index from the moment to
the end: about 5 ms at 100k messages for an early moment, paid by each anchor of each
present-state pack. So the answer for every moment is kept per database: the messages in date
order and the smallest rowid from each one onwards, read once and kept while the newest message
read is still there.

A caller needs a lower bound only (its rows are still filtered by date), and the kept answer
stays one: a new message takes a rowid above the newest one read (SQLite gives max(rowid) + 1),
so it never lowers the answer for a moment that some message read is at or after; a moment
after every message read is asked to SQLite, whose walk then covers new messages only. A removed
message can only raise the true answer. A rowid is given again only once every message above it
is gone: the newest message read is then missing (or another one holds its rowid) and all is
read afresh. Captures are never redated. (A reader on a snapshot older than a forget may be
told a bound past a message the forget removed: nothing more is skipped.)
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection

REFRESH = 2000  # new messages past the newest one read before everything is read again


@dataclass(frozen=True)
class _Starts:
    moments: np.ndarray  # sent_at as stored (bytes), ascending
    firsts: np.ndarray  # the smallest rowid among the messages from each moment on
    top: int  # the newest rowid read
    top_id: str  # its capture id


_KEPT: weakref.WeakKeyDictionary[Any, _Starts] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def first_rowid_since(conn: Connection, since: str) -> int | None:
    """A rowid no message sent at or after `since` (stored form, core.storage.db.db_time) is
    below, the smallest such rowid when it is known (SQLite only); None when no message is."""
    now = conn.exec_driver_sql("SELECT max(rowid) FROM captures").scalar()
    if now is None:
        return None
    with _LOCK:  # one reader reads them all; the others wait and use the same
        starts = _KEPT.get(conn.engine)
        if starts is None or now - starts.top > REFRESH or not _still_there(conn, starts):
            starts = _KEPT[conn.engine] = _read(conn, now)
    at = int(np.searchsorted(starts.moments, since.encode(), side="left"))
    if at < len(starts.moments):
        return int(starts.firsts[at])
    return conn.exec_driver_sql(  # later than every message read: new messages only
        "SELECT min(rowid) FROM captures INDEXED BY ix_captures_sent WHERE sent_at >= ?",
        (since,),
    ).scalar()


def _still_there(conn: Connection, starts: _Starts) -> bool:
    found = conn.exec_driver_sql("SELECT id FROM captures WHERE rowid = ?", (starts.top,)).scalar()
    return found == starts.top_id


def _read(conn: Connection, top: int) -> _Starts:
    """Every message's date and rowid (`top`: the newest rowid, in this same transaction)."""
    raw = conn.connection.driver_connection  # the same transaction, without a row object each
    rows = raw.execute(
        "SELECT sent_at, rowid FROM captures INDEXED BY ix_captures_sent ORDER BY sent_at"
    ).fetchall()
    moments = np.array([str(r[0]).encode() for r in rows], dtype=bytes)
    rowids = np.array([r[1] for r in rows], dtype=np.int64)
    firsts = np.minimum.accumulate(rowids[::-1])[::-1]
    top_id = conn.exec_driver_sql("SELECT id FROM captures WHERE rowid = ?", (top,)).scalar()
    return _Starts(moments, firsts, top, str(top_id))
