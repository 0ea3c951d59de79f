"""`elora doctor`: check configuration, stores, embedder and spool; count what is stored."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from core.errors import EloraError
from core.storage.db import run


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
        }


def _count(services, table: str) -> int:
    with services.db.session() as session:
        return run(session.connection(), f"SELECT count(*) FROM {table}").scalar_one()


def run_checks(services) -> Report:
    """Run every check; each is isolated, and a failing one is reported, never raised."""
    report = Report()
    settings = services.settings
    report.checks.append(
        Check("config", True, f"home={settings.home} embedder={settings.embedder}")
    )
    for name, check in (
        ("database", _database),
        ("spool", _spool),
        ("embedder", _embedder),
        ("vectors", _vectors),
    ):
        try:
            report.checks.append(check(services, report))
        except Exception as exc:  # the doctor reports what is broken; it must not break
            report.checks.append(Check(name, False, f"{type(exc).__name__}: {exc}"))
    return report


def _database(services, report: Report) -> Check:
    try:
        counts = services.archive.counts()
        counts["entries"] = _count(services, "memory_entries")
        counts["proposals"] = _count(services, "proposals")
        counts["proposals_pending"] = _count(
            services, "proposals WHERE status IN ('pending', 'recommended')"
        )
        report.counts.update(counts)
        with services.db.session() as session:
            version = run(
                session.connection(), "SELECT max(version) FROM schema_migrations"
            ).scalar_one()
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
