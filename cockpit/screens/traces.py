"""Traces: recent requests and a small chart of spend and requests per day."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Label, Sparkline, Static

from cockpit.screens.base import EloraScreen, shown_safely
from cockpit.widgets.tables import RowTable
from core import app as elora


@dataclass
class TracesLoaded(Message):
    """Recent traces and the activity of the last days."""

    recent: list[Any]
    daily: list[dict[str, Any]]


class TracesScreen(EloraScreen):
    """Classification, models, escalations, latency and cost of recent requests."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="charts"):
            with Vertical():
                yield Label("requests / day (14 d)", id="requests-label")
                yield Sparkline([], id="requests-chart")
            with Vertical():
                yield Label("spend / day (14 d)", id="spend-label")
                yield Sparkline([], id="spend-chart")
        with Horizontal(id="traces-main"):
            yield RowTable(id="traces", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(classes="detail", id="trace-detail"):
                yield Static("", id="trace-body")
        yield Footer()

    def __init__(self):
        super().__init__()
        self.traces: dict[str, Any] = {}

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
        # The models column is the escalation path (LITE→FLASH): it says what an escalation
        # count would, and which tiers answered.
        for label, width in (("time", 11), ("surface", 8), ("intent", 19), ("models", 14),
                             ("ms", 6), ("cost", 8)):  # fmt: skip
            table.add_column(label, width=width)
        self.sub_title = "traces"

    def reload_data(self) -> None:
        self.load_traces()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_traces(self) -> None:
        """The latest 200 requests and the last 14 days."""
        services = self.services
        recent = elora.recent_traces(services, 200)
        self.post_message(TracesLoaded(recent, elora.daily_activity(services, 14)))

    @shown_safely
    def on_traces_loaded(self, data: TracesLoaded) -> None:
        daily = data.daily
        self.query_one("#requests-chart", Sparkline).data = [d["requests"] for d in daily]
        self.query_one("#spend-chart", Sparkline).data = [d["cost"] for d in daily]
        total = sum(d["cost"] for d in daily)
        self.query_one("#requests-label", Label).update(
            f"requests / day (14 d): {sum(d['requests'] for d in daily)} in all"
        )
        self.query_one("#spend-label", Label).update(f"spend / day (14 d): ${total:.4f} in all")
        self.traces = {t.id: t for t in data.recent}
        rows = []
        for t in data.recent:
            models = elora.escalation_path(t)
            cost = "?" if t.cost is None else f"{t.cost:.5f}"
            rows.append((t.id, (f"{t.created_at:%m-%d %H:%M}", t.surface,
                                str((t.classification or {}).get("intent", "-")), models,
                                str(t.latency_ms), cost)))  # fmt: skip
        self.query_one(RowTable).refill(rows)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        trace = self.traces.get(event.row_key.value)
        if trace is None:
            return
        lines = [
            f"[b]{trace.id}[/b] · {trace.surface} · chat {trace.chat_id} · {trace.created_at:%Y-%m-%d %H:%M:%S}",
            f"classification: {escape(str(trace.classification))}",
            f"pack: {len((trace.pack or {}).get('items', []))} items, {trace.pack.get('used', 0)} tokens"
            + (" (degraded)" if trace.pack.get("degraded") else ""),
        ]
        for m in trace.models:
            lines.append(
                f"call {m.get('tier')} {escape(str(m.get('model')))}: {m.get('tokens_in')}/{m.get('tokens_out')} tokens, {m.get('latency_ms')} ms"
            )
        for e in trace.escalations:
            lines.append(f"escalation {e.get('from')} → {e.get('to')}")
        for c in trace.tool_calls:
            lines.append(
                f"tool {c.get('name')}: {'ok' if c.get('ok') else escape(str(c.get('error')))}"
            )
        if trace.error:
            lines.append(f"[red]status: {escape(trace.error)}[/red]")
        if trace.feedback:
            lines.append("feedback: " + ", ".join(f["signal"] for f in trace.feedback))
        self.query_one("#trace-body", Static).update("\n".join(lines))
