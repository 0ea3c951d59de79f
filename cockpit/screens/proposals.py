"""Proposals, the first screen: review what Elora would like to remember."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from cockpit.screens.base import EloraScreen
from cockpit.widgets.dialogs import ConfirmDialog, EditDialog

OPEN = ("pending", "recommended")
REJECTED = ("rejected",)


@dataclass
class ProposalView:
    """A proposal with what the reviewer needs beside it."""

    proposal: Any
    conflict: Any | None
    sources: list[dict[str, Any]]


class ProposalsScreen(EloraScreen):
    """Pending and recommended proposals; a, e, r, A, u act at once."""

    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("e", "edit", "Edit+approve"),
        Binding("r", "reject", "Reject"),
        Binding("A", "approve_recommended", "Approve all rec."),
        Binding("u", "restore", "Restore"),
        Binding("v", "toggle_view", "Open/rejected"),
    ]

    def __init__(self):
        super().__init__()
        self.view = OPEN
        self.rows: dict[str, ProposalView] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="proposals", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="proposal-detail", classes="detail"):
                yield Static("No proposal selected.", id="proposal-body")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        table = self.query_one(DataTable)
        table.add_columns("status", "A-MAC", "kind/tier", "text")
        self.sub_title = "open proposals"

    def load(self) -> list[ProposalView]:
        from core.learning.canonical import capture_sources

        services = self.services
        rows = services.proposals.list(self.view, limit=200)
        conflicts = services.memory.by_uuids([p.conflict_uuid for p in rows if p.conflict_uuid])
        return [
            ProposalView(
                p, conflicts.get(p.conflict_uuid), capture_sources(services, p.source_capture_ids)
            )
            for p in rows
        ]

    def show(self, views: list[ProposalView]) -> None:
        table = self.query_one(DataTable)
        selected = self._selected_id()
        table.clear()
        self.rows = {v.proposal.id: v for v in views}
        for v in views:
            p = v.proposal
            mark = "⚠ " if v.conflict is not None else ""
            total = f"{p.total:.2f}" if p.total is not None else "-"
            table.add_row(p.status, total, f"{p.kind}/{p.tier}", mark + p.text[:70], key=p.id)
        if selected in self.rows:
            table.move_cursor(row=table.get_row_index(selected))
        self._detail()

    def _selected_id(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._detail()

    def _detail(self) -> None:
        body = self.query_one("#proposal-body", Static)
        view = self.rows.get(self._selected_id() or "")
        if view is None:
            body.update("No proposal selected." if not self.rows else "")
            return
        p = view.proposal
        lines = [
            f"[b]{escape(p.text)}[/b]",
            f"{p.kind} · {p.tier} · {p.status} · by {p.authority} ({p.origin}) · {p.created_at:%Y-%m-%d %H:%M}",
        ]
        grid = Table.grid(padding=(0, 1))
        for name, value in (p.scores or {}).items():
            grid.add_row(name, f"{value:.2f}")
        if p.total is not None:
            grid.add_row("[b]total[/b]", f"[b]{p.total:.2f}[/b] / 6")
        parts: list[Any] = ["\n".join(lines), "", "[b]A-MAC[/b]", grid, ""]
        parts += [escape(r) for r in p.reasons]
        if view.sources:
            parts += ["", "[b]Source messages[/b]"]
            for s in view.sources:
                parts.append(
                    f"{s.get('date', '')[:16]} {s.get('speaker') or ''} · {s.get('surface')} chat {s.get('chat_id')} #{s.get('message_id')}"
                )
        if view.conflict is not None:
            side = Table(title=f"{p.conflict_relation}", expand=True)
            side.add_column("existing: " + view.conflict.memory_id)
            side.add_column("proposed")
            side.add_row(escape(view.conflict.canonical_text), escape(p.text))
            parts += ["", side]
        from rich.console import Group

        body.update(Group(*parts))

    # -- actions ---------------------------------------------------------------------------

    def _current(self):
        view = self.rows.get(self._selected_id() or "")
        if view is None:
            self.notify("No proposal selected.", severity="warning")
        return view.proposal if view else None

    def action_approve(self) -> None:
        from core.learning.review import approve

        p = self._current()
        if p is not None:
            self.background(lambda: approve(self.services, p.id), lambda e: self.action_refresh_data(),
                            success=f"approved {p.text[:40]}")  # fmt: skip

    def action_edit(self) -> None:
        from core.learning.review import approve

        p = self._current()
        if p is None:
            return

        def edited(text: str | None) -> None:
            if text:
                self.background(lambda: approve(self.services, p.id, edit=text),
                                lambda e: self.action_refresh_data(), success="edited and approved")  # fmt: skip

        self.app.push_screen(EditDialog("Edit, then approve", p.text), edited)

    def action_reject(self) -> None:
        from core.learning.review import reject

        p = self._current()
        if p is not None:
            self.background(lambda: reject(self.services, p.id), lambda e: self.action_refresh_data(),
                            success="rejected (press v then u to restore)")  # fmt: skip

    def action_approve_recommended(self) -> None:
        from core.learning.review import approve_recommended

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.background(lambda: approve_recommended(self.services),
                                lambda entries: (self.notify(f"approved {len(entries)} recommended"),
                                                 self.action_refresh_data()))  # fmt: skip

        self.app.push_screen(
            ConfirmDialog("Approve every recommended proposal?", yes="Approve"), confirmed
        )

    def action_restore(self) -> None:
        from core.learning.review import restore

        p = self._current()
        if p is None:
            return
        if p.status != "rejected":
            self.notify("Only rejected proposals can be restored (press v).", severity="warning")
            return
        self.background(lambda: restore(self.services, p.id), lambda e: self.action_refresh_data(),
                        success="restored")  # fmt: skip

    def action_toggle_view(self) -> None:
        self.view = REJECTED if self.view == OPEN else OPEN
        self.sub_title = "rejected proposals" if self.view == REJECTED else "open proposals"
        self.action_refresh_data()
