"""`elora doctor`: check configuration, stores, embedder and spool; count what is stored."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from core.errors import EloraError


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
        }


def _count(services, table: str) -> int:
    with services.db.session() as session:
        return session.connection().exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one()


def run_checks(services) -> Report:
    """Run every check; a failing check is reported, never raised."""
    report = Report()
    settings = services.settings
    report.checks.append(
        Check("config", True, f"home={settings.home} embedder={settings.embedder}")
    )

    try:
        counts = services.archive.counts()
        counts["entries"] = _count(services, "memory_entries")
        counts["proposals"] = _count(services, "proposals")
        counts["proposals_pending"] = _count(
            services, "proposals WHERE status IN ('pending', 'recommended')"
        )
        report.counts = counts
        with services.db.session() as session:
            version = (
                session.connection()
                .exec_driver_sql("SELECT max(version) FROM schema_migrations")
                .scalar_one()
            )
        report.checks.append(
            Check("database", True, f"{settings.resolved_database_url} (schema v{version})")
        )
    except EloraError as exc:
        report.checks.append(Check("database", False, str(exc)))

    report.spool_backlog = services.spool.backlog()
    report.counts["spool_backlog"] = report.spool_backlog
    report.checks.append(
        Check(
            "spool",
            report.spool_backlog == 0,
            "empty"
            if report.spool_backlog == 0
            else f"{report.spool_backlog} captures wait: run `elora jobs run replay-spool`",
        )
    )

    embedder = services.embedder
    report.embedder = {"name": embedder.name, "dim": None, "query_ms": None}
    try:
        started = time.perf_counter()
        vector = embedder.embed_query("doctor: bonjour, hello")
        report.embedder["dim"] = int(vector.shape[0])
        report.embedder["query_ms"] = round((time.perf_counter() - started) * 1000, 1)
        kernel = getattr(embedder, "kernel", None)
        report.embedder["engine"] = kernel
        engine = f", engine {kernel}" if kernel else ""
        report.checks.append(
            Check("embedder", True, f"{embedder.name} ({vector.shape[0]} dims{engine})")
        )
    except EloraError as exc:
        report.checks.append(Check("embedder", False, str(exc)))

    try:
        vs = services.vectorspace
        recorded = vs.recorded_signature()
        sizes = {
            name: services.vectors.count(name)
            for name in ("memory", "archive", "turns", "ephemeral")
        }
        report.counts.update({f"vectors_{k}": v for k, v in sizes.items()})
        if recorded and recorded != vs.signature:
            report.checks.append(
                Check("vectors", False, f"made by {recorded}: run `elora reindex`")
            )
        else:
            location = getattr(services.vectors, "location", "custom index")
            report.checks.append(Check("vectors", True, f"{location} {sizes}"))
    except EloraError as exc:
        report.checks.append(Check("vectors", False, str(exc)))
    return report
