"""Health: spool backlog, embedder, jobs, store sizes, capability profile, spend vs cap."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static
from textual.worker import Worker

from cockpit.screens.base import EloraScreen


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


class HealthScreen(EloraScreen):
    """Everything that tells whether memory is healthy, in one place."""

    def __init__(self):
        super().__init__()
        # The costly part (an embedding, a walk over the vector store) runs in its own worker
        # when the screen is shown and on ctrl+r; periodic reloads reuse its last result.
        self._probe: dict[str, Any] = {"embedder": "checking…", "chroma_bytes": None}
        self._shown: dict[str, Any] | None = None
        self._probing: Worker | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("Loading…", id="health-body")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "health"

    def refresh_costly(self) -> None:
        if self._probing is None or self._probing.is_finished:
            self._probing = self.background(self._run_probe, self._show_probe, group="probe")

    def _run_probe(self) -> dict[str, Any]:
        from core.errors import EloraError

        services = self.services
        started = time.perf_counter()
        try:
            services.embedder.embed_query("health check")
            embedder = f"ok ({(time.perf_counter() - started) * 1000:.0f} ms)"
        except EloraError as exc:
            embedder = f"FAILING: {exc}"
        return {
            "embedder": f"{services.embedder.name} · {embedder}",
            "chroma_bytes": _size(services.settings.chroma_dir),
        }

    def load(self, _query: None) -> dict[str, Any]:
        from core.jobs.registry import JOBS, last_runs

        services = self.services
        settings = services.settings
        db_path = services.db.path
        runs = last_runs(services)
        return {
            "spool": services.spool.backlog(),
            "jobs": {name: runs.get(name) for name in JOBS},
            "counts": services.archive.counts(),
            "entries": services.memory.count(),
            "proposals": services.proposals.count(),
            "db_bytes": sum(_size(Path(str(db_path) + s)) for s in ("", "-wal")) if db_path else 0,
            "profile": services.profile.all(),
            "spend": services.traces.spent_today(),
            "cap": settings.daily_spend_cap,
        }

    def _show_probe(self, probe: dict[str, Any]) -> None:
        self._probe = probe
        if self._shown is not None:
            self.show(self._shown)

    def show(self, d: dict[str, Any]) -> None:
        self._shown = d
        d = {**d, **self._probe}
        stores = Table(title="Stores", expand=True)
        stores.add_column("what")
        stores.add_column("value", justify="right")
        spool = d["spool"]
        stores.add_row("spool backlog", f"[red]{spool}[/red]" if spool else "0")
        stores.add_row("captures", f"{d['counts']['captures']:,}")
        stores.add_row(
            "chunks (pending vectors)",
            f"{d['counts']['chunks']:,} ({d['counts']['chunks_pending_vectors']:,})",
        )
        stores.add_row("memory entries", f"{d['entries']:,}")
        stores.add_row("open proposals", f"{d['proposals']:,}")
        stores.add_row("database size", f"{d['db_bytes'] / 1e6:.1f} MB")
        chroma = d["chroma_bytes"]
        stores.add_row("vector store size", "…" if chroma is None else f"{chroma / 1e6:.1f} MB")
        stores.add_row("embedder", d["embedder"])
        cap, spend = d["cap"], d["spend"]
        over = cap is not None and spend >= cap
        stores.add_row(
            "spend today",
            ("[red]" if over else "")
            + f"${spend:.4f}"
            + (f" of ${cap:.2f} cap" if cap is not None else " (no cap)")
            + (" — cap reached[/red]" if over else ""),
        )
        jobs = Table(title="Scheduled jobs", expand=True)
        for col in ("job", "last run", "outcome", "seconds"):
            jobs.add_column(col)
        for name, run in d["jobs"].items():
            if run is None:
                jobs.add_row(name, "never", "-", "-")
            else:
                outcome = "ok" if run["ok"] else f"[red]failed: {run.get('error', '')[:40]}[/red]"
                jobs.add_row(name, run["at"][:16], outcome, str(run["seconds"]))
        profile = Table(title="Capability profile", expand=True)
        for col in ("dimension", "p", "effective", "samples", "updated", "stale"):
            profile.add_column(col)
        for p in d["profile"]:
            profile.add_row(p["dimension"], str(p["p"]), str(p["effective"]), str(p["samples"]),
                            p["last_updated"][:16], "[yellow]stale[/yellow]" if p["stale"] else "fresh")  # fmt: skip
        if not d["profile"]:
            profile.add_row("(no feedback yet: every dimension reads 0.5)", "", "", "", "", "")
        self.query_one("#health-body", Static).update(Group(stores, jobs, profile))
