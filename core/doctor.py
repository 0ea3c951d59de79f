"""Health: check configuration, stores, embedder and spool; count what is stored; sizes, jobs,
capability profile and spend. `elora doctor` prints it, the cockpit's Health screen shows it."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import EloraError
from core.storage.migrations import schema_version


@dataclass
class Check:
    """One diagnostic: a name, ok or not, and a short detail."""

    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    """Every check plus the counts and facts the operator needs at a glance."""

    checks: list[Check] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    embedder: dict[str, Any] = field(default_factory=dict)
    spool_backlog: int = 0
    vectors: dict[str, Any] = field(default_factory=dict)
    sizes: dict[str, int | None] = field(default_factory=dict)  # bytes on disk
    jobs: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # last run of each
    profile: list[dict[str, Any]] = field(default_factory=list)
    spend: dict[str, float | None] = field(default_factory=dict)  # today, cap
    probed: bool = True  # the embedder and the vector store were checked

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "ok": self.ok,
            "checks": [asdict(c) for c in self.checks],
            "counts": self.counts,
            "embedder": self.embedder,
            "spool_backlog": self.spool_backlog,
            "vectors": self.vectors,
            "sizes": self.sizes,
            "jobs": self.jobs,
            "profile": self.profile,
            "spend": self.spend,
        }


def run_checks(services, probe: bool = True) -> Report:
    """Run every check; each is isolated, and a failing one is reported, never raised.

    `probe` False leaves out the costly checks (an embedding, a walk over the vector store):
    the cockpit reloads the rest every few seconds and probes when asked.
    """
    report = Report(probed=probe)
    settings = services.settings
    report.checks.append(
        Check("config", True, f"home={settings.home} embedder={settings.embedder}")
    )
    checks = [("database", _database), ("spool", _spool), ("activity", _activity)]
    if probe:
        checks += [("embedder", _embedder), ("vectors", _vectors)]
    for name, check in checks:
        try:
            found = check(services, report)
        except Exception as exc:  # the doctor reports what is broken; it must not break
            found = Check(name, False, f"{type(exc).__name__}: {exc}")
        if found is not None:
            report.checks.append(found)
    return report


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _activity(services, report: Report) -> None:
    """What the operator watches beside the checks: jobs, profile, spend (not checks)."""
    from core.jobs.registry import JOBS, last_runs

    runs = last_runs(services)
    report.jobs = {name: runs.get(name) for name in JOBS}
    report.profile = services.profile.all()
    report.spend = {
        "today": services.traces.spent_today(),
        "cap": services.settings.daily_spend_cap,
    }


def _database(services, report: Report) -> Check:
    try:
        counts = services.archive.counts()
        counts["entries"] = services.memory.count()
        counts["proposals"] = services.proposals.count(statuses=None)
        counts["proposals_pending"] = services.proposals.count()
        report.counts.update(counts)
        version = schema_version(services.db)
        path = services.db.path
        report.sizes["database"] = (
            sum(_size(Path(f"{path}{suffix}")) for suffix in ("", "-wal")) if path else 0
        )
    except EloraError as exc:
        return Check("database", False, str(exc))
    return Check("database", True, f"{services.db.safe_url} (schema v{version})")


def _spool(services, report: Report) -> Check:
    report.spool_backlog = services.spool.backlog()
    report.counts["spool_backlog"] = report.spool_backlog
    if report.spool_backlog == 0:
        return Check("spool", True, "empty")
    return Check(
        "spool",
        False,
        f"{report.spool_backlog} captures wait: run `elora jobs run replay-spool`",
    )


def _embedder(services, report: Report) -> Check:
    embedder = services.embedder
    report.embedder = {"name": embedder.name, "dim": None, "query_ms": None}
    try:
        started = time.perf_counter()
        vector = embedder.embed_query("doctor: bonjour, hello")
    except EloraError as exc:
        return Check("embedder", False, str(exc))
    report.embedder["dim"] = int(vector.shape[0])
    report.embedder["query_ms"] = round((time.perf_counter() - started) * 1000, 1)
    kernel = getattr(embedder, "kernel", None)
    report.embedder["engine"] = kernel
    engine = f", engine {kernel}" if kernel else ""
    return Check("embedder", True, f"{embedder.name} ({vector.shape[0]} dims{engine})")


def _vectors(services, report: Report) -> Check:
    """Every collection probed and compared with what SQLite says was indexed."""
    report.sizes["vector_store"] = _size(services.settings.chroma_dir)
    vs = services.vectorspace
    health = vs.health(refresh=True)
    report.vectors = {
        "location": health.location,
        "collections": {name: c.to_json() for name, c in health.collections.items()},
    }
    for name, c in health.collections.items():
        if c.vectors is not None:
            report.counts[f"vectors_{name}"] = c.vectors
        report.counts[f"vectors_{name}_expected"] = c.expected
    try:
        recorded = vs.recorded_signature()
    except EloraError as exc:
        recorded = None
        report.vectors["signature_error"] = str(exc)
    if recorded and recorded != vs.signature:
        return Check("vectors", False, f"made by {recorded}: run `elora reindex`")
    return Check("vectors", health.ok, health.summary())
