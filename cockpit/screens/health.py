"""Health: spool backlog, embedder, jobs, store sizes, capability profile, spend vs cap: the
report `elora doctor` prints (core.app.health), shown as tables."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Header, Static

from cockpit.screens.base import EloraScreen, shown_safely
from core import app as elora


@dataclass
class HealthLoaded(Message):
    """A health report: `probed` when the embedder and the vector store were checked too."""

    report: elora.Report


class HealthScreen(EloraScreen):
    """Everything that tells whether memory is healthy, in one place."""

    def __init__(self):
        super().__init__()
        # The costly part (an embedding, a walk over the vector store) is probed when the
        # screen is shown and on ctrl+r; periodic reloads reuse the last probe's findings.
        self.probe: elora.Report | None = None
        self.shown: elora.Report | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("Loading…", id="health-body")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "health"

    def refresh_costly(self) -> None:
        if not any(not w.is_finished for w in self.workers if w.group == "probe"):
            self.probe_health()

    def reload_data(self) -> None:
        self.load_health()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_health(self) -> None:
        """The cheap part of the report: counts, sizes, jobs, profile, spend."""
        self.post_message(HealthLoaded(elora.health(self.services, probe=False)))

    @work(thread=True, exit_on_error=False, group="probe")
    def probe_health(self) -> None:
        """The whole report, the embedder and the vector store checked too."""
        self.post_message(HealthLoaded(elora.health(self.services, probe=True)))

    @shown_safely
    def on_health_loaded(self, loaded: HealthLoaded) -> None:
        if loaded.report.probed:
            self.probe = loaded.report
            if self.shown is not None:
                self.query_one("#health-body", Static).update(render_health(self.shown, self.probe))
            return
        self.shown = loaded.report
        self.query_one("#health-body", Static).update(render_health(self.shown, self.probe))


def _embedder(probe: elora.Report | None) -> str:
    if probe is None:
        return "checking…"
    check = next((c for c in probe.checks if c.name == "embedder"), None)
    name = probe.embedder.get("name", "")
    if check is None or not check.ok:
        return f"{name} · FAILING: {check.detail if check else 'not checked'}"
    return f"{name} · ok ({probe.embedder.get('query_ms', 0):.0f} ms)"


def render_health(report: elora.Report, probe: elora.Report | None) -> Group:
    """Stores (with the last probe's embedder and vector store), jobs, capability profile."""
    counts = report.counts
    stores = Table(title="Stores", expand=True)
    stores.add_column("what")
    stores.add_column("value", justify="right")
    spool = report.spool_backlog
    stores.add_row("spool backlog", f"[red]{spool}[/red]" if spool else "0")
    stores.add_row("captures", f"{counts.get('captures', 0):,}")
    stores.add_row(
        "chunks (pending vectors)",
        f"{counts.get('chunks', 0):,} ({counts.get('chunks_pending_vectors', 0):,})",
    )
    stores.add_row("memory entries", f"{counts.get('entries', 0):,}")
    stores.add_row("open proposals", f"{counts.get('proposals_pending', 0):,}")
    stores.add_row("database size", f"{(report.sizes.get('database') or 0) / 1e6:.1f} MB")
    vector_bytes = probe.sizes.get("vector_store") if probe is not None else None
    stores.add_row(
        "vector store size", "…" if vector_bytes is None else f"{vector_bytes / 1e6:.1f} MB"
    )
    stores.add_row("embedder", _embedder(probe))
    cap, spend = report.spend.get("cap"), report.spend.get("today") or 0.0
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
    for name, run in report.jobs.items():
        if run is None:
            jobs.add_row(name, "never", "-", "-")
        else:
            outcome = "ok" if run["ok"] else f"[red]failed: {run.get('error', '')[:40]}[/red]"
            jobs.add_row(name, run["at"][:16], outcome, str(run["seconds"]))
    profile = Table(title="Capability profile", expand=True)
    for col in ("dimension", "p", "effective", "samples", "updated", "stale"):
        profile.add_column(col)
    for p in report.profile:
        profile.add_row(p["dimension"], str(p["p"]), str(p["effective"]), str(p["samples"]),
                        p["last_updated"][:16], "[yellow]stale[/yellow]" if p["stale"] else "fresh")  # fmt: skip
    if not report.profile:
        profile.add_row("(no feedback yet: every dimension reads 0.5)", "", "", "", "", "")
    return Group(stores, jobs, profile)
