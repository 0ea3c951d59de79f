"""Memory: browse entries by tier/scope/topic/status, search, provenance and history, forget."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from cockpit.screens.base import EloraScreen
from cockpit.widgets.dialogs import ConfirmDialog

PAGE = 50
TIERS = ("semantic", "episodic", "procedural", "personalized", "environment")
STATUSES = ("active", "superseded", "deprecated")


class MemoryScreen(EloraScreen):
    """Entries a page at a time (never a full load), with details and forget."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search"),
        Binding("s", "toggle_mode", "Full-text/semantic"),
        Binding("right_square_bracket", "page(1)", "Next page"),
        Binding("left_square_bracket", "page(-1)", "Prev page"),
        Binding("f", "forget", "Forget"),
        Binding("escape", "clear_search", "Clear", show=False),
    ]

    def __init__(self):
        super().__init__()
        self.page_start = 0
        self.query_text = ""
        self.mode = "full-text"
        self.entries: dict[str, Any] = {}
        self.total = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="memory-filters"):
            yield Input(placeholder="search memory (/ to focus)", id="search")
            yield Select([(t, t) for t in TIERS], prompt="any tier", id="tier")
            yield Select([(s, s) for s in STATUSES], value="active", allow_blank=True,
                         prompt="any status", id="status")  # fmt: skip
            yield Input(placeholder="scope", id="scope")
            yield Input(placeholder="topic", id="topic")
        with Horizontal():
            with Vertical(id="memory-list"):
                yield DataTable(id="entries", cursor_type="row", zebra_stripes=True)
                yield Static("", id="memory-page", classes="hint")
            with VerticalScroll(id="memory-detail", classes="detail"):
                yield Static("No entry selected.", id="memory-body")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        table = self.query_one(DataTable)
        table.add_columns("memory_id", "tier", "kind", "imp", "text")
        table.focus()

    def _filter(self, widget_id: str) -> str | None:
        widget = self.query_one(f"#{widget_id}")
        if isinstance(widget, Select):
            return None if widget.value in (Select.NULL, None) else str(widget.value)
        return widget.value.strip() or None

    def load(self) -> dict[str, Any]:
        memory = self.services.memory
        tier, status = self._filter("tier"), self._filter("status")
        scope, topic = self._filter("scope"), self._filter("topic")
        if self.query_text:
            if self.mode == "semantic":
                statuses = (status,) if status else STATUSES
                hits, _ = memory.search(self.query_text, PAGE, statuses=statuses,
                                               tiers=[tier] if tier else None,
                                               scopes=[scope] if scope else None)  # fmt: skip
                rows = [h.entry for h in hits]
            else:
                rows = [e for e in memory.fulltext(self.query_text, PAGE, status)
                        if (not tier or e.tier == tier) and (not scope or e.scope == scope)]  # fmt: skip
            return {"rows": rows, "total": len(rows), "details": self._details(rows[:1])}
        rows = memory.list(tier=tier, scope=scope, topic=topic, status=status, limit=PAGE,
                           offset=self.page_start)  # fmt: skip
        total = memory.count(status, tier=tier, scope=scope, topic=topic)
        return {"rows": rows, "total": total, "details": self._details(rows[:1])}

    def _details(self, rows) -> dict[str, Any]:
        """Links and history of entries (fetched in the worker, not on the UI thread)."""
        memory = self.services.memory
        links = memory.links_of([r.uuid for r in rows])
        related = memory.by_uuids([u for link in links for u in (link.from_uuid, link.to_uuid)])
        return {"links": links, "related": related}

    def show(self, data: dict[str, Any]) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.entries = {e.memory_id: e for e in data["rows"]}
        self.total = data["total"]
        for e in data["rows"]:
            table.add_row(
                e.memory_id,
                e.tier,
                e.kind,
                str(e.importance),
                e.canonical_text[:60],
                key=e.memory_id,
            )
        where = (
            f"{self.mode} search: {self.query_text!r}"
            if self.query_text
            else f"rows {self.page_start + 1}–{self.page_start + len(data['rows'])} of {self.total:,}"
        )
        self.query_one("#memory-page", Static).update(where)
        self._render_detail(data["details"])

    def _selected(self):
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.entries.get(key)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        entry = self._selected()
        if entry is not None:
            self.background(lambda: self._details([entry]), self._render_detail, group="detail")

    def _render_detail(self, details: dict[str, Any]) -> None:
        entry = self._selected()
        body = self.query_one("#memory-body", Static)
        if entry is None:
            body.update("No entry selected.")
            return
        parts: list[Any] = [
            f"[b]{escape(entry.canonical_text)}[/b]",
            f"{entry.memory_id} · {entry.tier} · {entry.kind} · {entry.status} · scope {entry.scope}",
            f"importance {entry.importance} · confidence {entry.confidence:.2f} · observations {entry.observations} · {entry.truth_mode}",
            f"topics: {', '.join(entry.topics)}",
            f"created {entry.created_at:%Y-%m-%d} · touched {entry.last_touched:%Y-%m-%d}"
            + (f" · valid {entry.valid_from:%Y-%m-%d}" if entry.valid_from else "")
            + (f" → {entry.valid_to:%Y-%m-%d}" if entry.valid_to else ""),
            "",
            "[b]Provenance[/b]",
        ]
        for s in entry.sources or [{"origin": "unknown"}]:
            parts.append(escape(" · ".join(f"{k} {v}" for k, v in s.items() if v is not None)))
        related = details.get("related", {})
        mine = [x for x in details.get("links", []) if entry.uuid in (x.from_uuid, x.to_uuid)]
        if mine:
            parts += ["", "[b]Links and history[/b]"]
            for link in mine:
                other = related.get(
                    link.to_uuid if link.from_uuid == entry.uuid else link.from_uuid
                )
                if other is None:
                    continue
                direction = "→" if link.from_uuid == entry.uuid else "←"
                parts.append(
                    f"{direction} {link.relation} {other.memory_id} ({other.status}): {escape(other.canonical_text[:120])}"
                )
        body.update(Group(*parts))

    # -- actions ---------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            self.query_text = event.value.strip()
        self.page_start = 0
        self.action_refresh_data()

    def on_select_changed(self, _event: Select.Changed) -> None:
        self.page_start = 0
        self.action_refresh_data()

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_clear_search(self) -> None:
        self.query_one("#search", Input).value = ""
        self.query_text = ""
        self.query_one(DataTable).focus()
        self.action_refresh_data()

    def action_toggle_mode(self) -> None:
        self.mode = "semantic" if self.mode == "full-text" else "full-text"
        self.notify(f"search mode: {self.mode}")
        if self.query_text:
            self.action_refresh_data()

    def action_page(self, step: int) -> None:
        if self.query_text:
            return
        new = self.page_start + step * PAGE
        if 0 <= new < max(self.total, 1):
            self.page_start = new
            self.action_refresh_data()

    def action_forget(self) -> None:
        from core.memory.api import forget_memory

        entry = self._selected()
        if entry is None:
            self.notify("No entry selected.", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.background(lambda: forget_memory(self.services, entry.memory_id),
                                lambda r: self.action_refresh_data(), success=f"forgot {entry.memory_id}")  # fmt: skip

        self.app.push_screen(
            ConfirmDialog(f"Forget {entry.memory_id}?\n{entry.canonical_text[:200]}\nThis cannot be undone.",
                          yes="Forget"), confirmed)  # fmt: skip
