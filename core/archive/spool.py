"""The append-only JSONL spool: where captures (and the traces of their exchanges) wait,
fsync'd, while the database is unwritable."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.archive.records import CaptureIn

log = logging.getLogger(__name__)

# Version 2 adds `kind` ("capture" or "trace"); a line without it is a version-1 capture.
SPOOL_VERSION = 2


@dataclass(frozen=True)
class ReplayReport:
    """What a replay did: lines read, captures newly stored, lines set aside as unreadable."""

    files: int
    lines: int
    stored: int
    unreadable: int
    traces: int = 0


class Spool:
    """A directory of JSONL files; appends and replays are serialised by one lock file."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._replaying = threading.local()

    def in_replay(self) -> bool:
        """Whether this thread is replaying the spool right now (its writes are the replay's)."""
        return getattr(self._replaying, "active", False)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def files(self) -> list[Path]:
        """Spool files waiting for replay, oldest first."""
        if not self.directory.exists():
            return []
        return sorted(self.directory.glob("spool-*.jsonl"))

    def append(self, capture: CaptureIn, reason: str) -> Path:
        """Write one capture as a JSON line and fsync it before returning."""
        return self._append({"kind": "capture", "capture": capture.to_json()}, reason)

    def append_trace(self, trace: dict, reason: str) -> Path:
        """Write one request trace (JSON-ready, with its id) and fsync it before returning."""
        return self._append({"kind": "trace", "trace": trace}, reason)

    def _append(self, payload: dict, reason: str) -> Path:
        record = {
            "v": SPOOL_VERSION,
            "spooled_at": datetime.now(UTC).isoformat(),
            "reason": reason,
            **payload,
        }
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._locked():
            day = datetime.now(UTC).strftime("%Y%m%d")
            path = self.directory / f"spool-{day}-{os.getpid()}.jsonl"
            created = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                self._fsync_dir()
        return path

    def _fsync_dir(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def backlog(self) -> int:
        """How many spooled captures wait for replay."""
        total = 0
        for path in self.files():
            with open(path, "rb") as fh:
                total += sum(1 for line in fh if line.strip())
        return total

    def replay(
        self,
        store: Callable[[list[CaptureIn]], int],
        store_traces: Callable[[list[dict]], int] | None = None,
        batch_size: int = 500,
    ) -> ReplayReport:
        """Hand every spooled capture to `store` and every trace to `store_traces` (both must
        ignore known ids), then drop the file.

        A file is removed only after all of its lines were stored, so a crash mid-replay leaves
        it in place; the rerun stores nothing twice because ids are fixed in the spool. Lines
        that cannot be parsed are moved to `rejected-*.jsonl`, never dropped. Captures go first,
        so a trace never arrives before the message it describes.
        """
        self._replaying.active = True
        try:
            return self._replay(store, store_traces, batch_size)
        finally:
            self._replaying.active = False

    def _replay(self, store, store_traces, batch_size) -> ReplayReport:
        files = lines = stored = unreadable = traces = 0
        with self._locked():
            for path in self.files():
                files += 1
                batch: list[CaptureIn] = []
                pending_traces: list[dict] = []
                bad: list[str] = []
                with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                    for raw in fh:
                        if not raw.strip():
                            continue
                        lines += 1
                        try:
                            record = json.loads(raw)
                            if record.get("kind") == "trace" and store_traces is not None:
                                pending_traces.append(dict(record["trace"]))
                            else:
                                batch.append(CaptureIn.from_json(record["capture"]))
                        except (ValueError, KeyError, TypeError, AttributeError) as exc:
                            log.warning("spool %s: unreadable line set aside (%s)", path.name, exc)
                            bad.append(raw if raw.endswith("\n") else raw + "\n")
                        if len(batch) >= batch_size:
                            stored += store(batch)
                            batch = []
                if batch:
                    stored += store(batch)
                if pending_traces and store_traces is not None:
                    traces += store_traces(pending_traces)
                if bad:
                    unreadable += len(bad)
                    rejected = self.directory / f"rejected-{path.stem}.jsonl"
                    with open(rejected, "a", encoding="utf-8", errors="surrogateescape") as out:
                        out.writelines(bad)
                        out.flush()
                        os.fsync(out.fileno())
                path.unlink()
                self._fsync_dir()
        return ReplayReport(
            files=files, lines=lines, stored=stored, unreadable=unreadable, traces=traces
        )

    def drop_lines(self, path: Path, drop: Callable[[str], bool]) -> int:
        """Remove the lines `drop` picks from one spool file, in place and under the lock
        (forgetting a phrase reaches captures still waiting here); return how many went."""
        with self._locked():
            if not path.exists():
                return 0
            with open(path, "r+b") as fh:
                raw = fh.read()
                # Split on "\n" only: a JSON line may hold other line separators in its strings.
                lines = raw.decode("utf-8", errors="surrogateescape").split("\n")
                kept = [line for line in lines if not (line.strip() and drop(line))]
                data = "\n".join(kept).encode("utf-8", errors="surrogateescape")
                fh.seek(0)
                fh.write(data + b"\0" * (len(raw) - len(data)))  # overwrite, then cut
                fh.flush()
                os.fsync(fh.fileno())
                fh.truncate(len(data))
                fh.flush()
                os.fsync(fh.fileno())
            if not data.strip():
                path.unlink()
                self._fsync_dir()
        return len(lines) - len(kept)
