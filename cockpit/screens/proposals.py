"""Proposals, the first screen: review what Elora would like to remember."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from cockpit.screens.base import TIER_SHORT, EloraScreen, refill
from cockpit.widgets.dialogs import ConfirmDialog, EditDialog

OPEN = ("pending", "recommended")
REJECTED = ("rejected",)
LIMIT = 200
STATUS_MARK = {"recommended": "★", "rejected": "✗"}
# What approving does to the entry a proposal conflicts with.
RELATION = {
    "contradict": "contradicts an entry (both are kept, linked as contradicting)",
    "duplicate": "duplicates an entry (approving confirms it: +1 observation)",
    "supersede": "supersedes an entry (approving marks the old one superseded)",
    "deprecate": "deprecates an entry (approving marks the old one deprecated)",
    "time_limit": "limits an entry in time (approving sets its end date)",
    "forget": "forgets an entry (its mirror file was deleted; approving forgets it for real)",
}


@dataclass
class ProposalView:
    """A proposal with what the reviewer needs beside it."""

    proposal: Any
    conflict: Any | None
    sources: list[dict[str, Any]]
    approving: bool = False  # a surface is writing its decision right now


class ProposalsScreen(EloraScreen):
    """Pending and recommended proposals; a, e, r, A, u act at once."""

    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("e", "edit", "Edit"),
        Binding("r", "reject", "Reject"),
        Binding("A", "approve_recommended", "All ★"),
        Binding("u", "restore", "Restore"),
        # One key, two labels: the footer says where `v` leads from the current view.
        Binding("v", "view('rejected')", "Rejected"),
        Binding("v", "view('open')", "Open"),
    ]

    def __init__(self):
        super().__init__()
        self.view = OPEN
        self.shown_view: tuple[str, ...] | None = None
        self.rows: dict[str, ProposalView] = {}
        self.recommended = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="proposals", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="proposal-detail", classes="detail"):
                yield Static("No proposal selected.", id="proposal-body")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # Fixed widths: the layout does not jump from one reload to the next.
        for label, width in (("", 2), ("A-MAC", 5), ("kind", 10), ("tier", 4), ("text", 200)):
            table.add_column(label, width=width)
        self.sub_title = "open proposals"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only the keys that make sense in the current view."""
        if action == "restore":
            return self.view == REJECTED
        if action in ("approve", "edit", "reject", "approve_recommended"):
            return self.view == OPEN
        if action == "view":
            return (self.view == OPEN) == (parameters[0] == "rejected")
        return True

    def query_state(self) -> tuple[str, ...]:
        return self.view

    def load(self, view: tuple[str, ...]) -> dict[str, Any]:
        from core.learning.canonical import capture_sources
        from core.learning.proposals import being_decided

        services = self.services
        rows = services.proposals.list(view, limit=LIMIT)
        conflicts = services.memory.by_uuids([p.conflict_uuid for p in rows if p.conflict_uuid])
        # One query for every source message of the page, not one per proposal.
        wanted = [c for p in rows for c in p.source_capture_ids]
        sources = {s["capture_id"]: s for s in capture_sources(services, wanted)}
        views = []
        now = services.clock.now()
        for p in rows:
            found = [sources[c] for c in p.source_capture_ids if c in sources]
            views.append(
                ProposalView(p, conflicts.get(p.conflict_uuid), found, being_decided(p, now))
            )
        return {
            "view": view,
            "views": views,
            "total": services.proposals.count(view),
            "recommended": services.proposals.count(("recommended",)),
        }

    def show(self, data: dict[str, Any]) -> None:
        if data["view"] != self.view:
            return  # loaded for the view the operator just left
        view_changed, self.shown_view = self.shown_view != self.view, self.view
        views = data["views"]
        self.rows = {v.proposal.id: v for v in views}
        self.recommended = data["recommended"]
        rows = []
        for v in views:
            p = v.proposal
            mark = "…" if v.approving else STATUS_MARK.get(p.status, " ")
            mark += "⚠" if v.conflict is not None else " "
            total = f"{p.total:.2f}" if p.total is not None else "-"
            tier = TIER_SHORT.get(p.tier, p.tier[:4])
            rows.append((p.id, (mark, total, p.kind, tier, p.text.replace("\n", " "))))
        refill(self.query_one(DataTable), rows, top=view_changed)
        name = "rejected" if self.view == REJECTED else "open"
        shown = f"{len(views)} of {data['total']}" if data["total"] > len(views) else len(views)
        extra = f", {self.recommended} recommended ★" if self.view == OPEN else ""
        approving = sum(v.approving for v in views)
        extra += f", {approving} approving…" if approving else ""
        self.sub_title = f"{name} proposals: {shown}{extra}"
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
            body.update("No proposal here." if not self.rows else "")
            return
        body.update(render_proposal(view))

    # -- actions ---------------------------------------------------------------------------

    def _current(self):
        view = self.rows.get(self._selected_id() or "")
        if view is None:
            self.notify("No proposal selected.", severity="warning")
        return view.proposal if view else None

    def _reload(self, _result: Any = None) -> None:
        self.action_refresh_data()

    def action_approve(self) -> None:
        from core.learning.review import approve

        p = self._current()
        if p is not None:
            self.background(self.as_operator(lambda: approve(self.services, p.id)), self._reload,
                            success=f"approved: {p.text[:40]}{self.undo_hint()}")  # fmt: skip

    def action_edit(self) -> None:
        from core.learning.review import approve

        p = self._current()
        if p is None:
            return

        def edited(text: str | None) -> None:
            if text:
                self.background(self.as_operator(lambda: approve(self.services, p.id, edit=text)),
                                self._reload,
                                success=f"edited and approved{self.undo_hint()}")  # fmt: skip

        self.app.push_screen(EditDialog("Edit, then approve", p.text), edited)

    def action_reject(self) -> None:
        from core.learning.review import reject

        p = self._current()
        if p is not None:
            self.background(lambda: reject(self.services, p.id), self._reload,
                            success="rejected (v shows the rejected ones, u restores)")  # fmt: skip

    def action_approve_recommended(self) -> None:
        from core.learning.review import approve_recommended

        if not self.recommended:
            self.notify("No recommended proposal to approve.", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.background(self.as_operator(lambda: approve_recommended(self.services)),
                                lambda entries: (self.notify(f"approved {len(entries)} "
                                                             f"recommended{self.undo_hint()}"),
                                                 self._reload()))  # fmt: skip

        question = f"Approve all {self.recommended} recommended proposal(s)?"
        self.app.push_screen(ConfirmDialog(question, yes="Approve"), confirmed)

    def action_restore(self) -> None:
        from core.learning.review import restore

        p = self._current()
        if p is not None:
            self.background(lambda: restore(self.services, p.id), self._reload,
                            success=f"restored: {p.text[:40]}")  # fmt: skip

    def action_view(self, which: str) -> None:
        self.view = REJECTED if which == "rejected" else OPEN
        self.sub_title = "rejected proposals" if self.view == REJECTED else "open proposals"
        self.refresh_bindings()
        self.action_refresh_data()


def render_proposal(view: ProposalView) -> Group:
    """The detail pane: text, any conflict side by side, A-MAC factors, reasons, sources."""
    p = view.proposal
    parts: list[Any] = [
        f"[b]{escape(p.text)}[/b]",
        f"{p.kind} · tier {p.tier} · {p.status}{' (approving…)' if view.approving else ''} · "
        f"by {p.authority} ({p.origin}) · "
        f"{p.created_at:%Y-%m-%d %H:%M}",
        f"id {p.id}",
    ]
    if view.conflict is not None:
        old = view.conflict
        relation = p.conflict_relation or "conflict"
        side = Table(expand=True, show_lines=True)
        side.add_column("existing", ratio=1)
        side.add_column("proposed", ratio=1)
        side.add_row(escape(old.canonical_text), escape(p.text))
        total = f"{p.total:.2f}" if p.total is not None else "-"  # unscored, as in the table
        side.add_row(escape(f"{old.memory_id} · {old.status}"), f"A-MAC {total}")
        parts += ["", f"[b][yellow]⚠ {escape(RELATION.get(relation, relation))}[/][/b]", side]
    parts += ["", "[b]A-MAC admission[/b]"]
    grid = Table.grid(padding=(0, 1))
    for name, value in (p.scores or {}).items():
        grid.add_row(name, f"{value:.2f}" if isinstance(value, int | float) else escape(str(value)))
    if p.total is not None:
        grid.add_row("[b]total[/b]", f"[b]{p.total:.2f}[/b] / 6")
    parts += [grid, *(f"[dim]{escape(r)}[/dim]" for r in p.reasons)]
    if view.sources:
        parts += ["", "[b]Source messages[/b]"]
        for s in view.sources:
            parts.append(escape(f"{s.get('date', '')[:16]} {s.get('speaker') or ''} · "
                                f"{s.get('surface')} chat {s.get('chat_id')} #{s.get('message_id')}"))  # fmt: skip
    return Group(*parts)
