"""Proposals, the first screen: review what Elora would like to remember."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from cockpit.screens.base import EloraScreen, shown_safely
from cockpit.widgets.dialogs import ConfirmDialog, EditDialog
from cockpit.widgets.tables import RowTable
from core import app as elora
from core.memory.vocabulary import TIER_SHORT

OPEN = elora.OPEN
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
ProposalView = elora.ProposalView


@dataclass
class QueueLoaded(Message):
    """The proposals of a view, loaded in a worker."""

    view: tuple[str, ...]
    views: list[ProposalView]
    total: int
    recommended: int


@dataclass
class Decided(Message):
    """A decision was written (approve, edit, reject, restore, approve all ★)."""

    notice: str


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
            yield RowTable(id="proposals", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="proposal-detail", classes="detail"):
                yield Static("No proposal selected.", id="proposal-body")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
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

    # -- loading ---------------------------------------------------------------------------

    def reload_data(self) -> None:
        self.load_queue(self.view)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_queue(self, view: tuple[str, ...]) -> None:
        """The view's proposals with their conflicts and source messages, and the counts."""
        services = self.services
        views = elora.review_queue(services, view, LIMIT, sources=True)
        total = elora.count_proposals(services, view)
        recommended = elora.count_proposals(services, ("recommended",))
        self.post_message(QueueLoaded(view, views, total, recommended))

    @shown_safely
    def on_queue_loaded(self, data: QueueLoaded) -> None:
        if data.view != self.view:
            return  # loaded for the view the operator just left
        view_changed, self.shown_view = self.shown_view != self.view, self.view
        views = data.views
        self.rows = {v.proposal.id: v for v in views}
        self.recommended = data.recommended
        rows = []
        for v in views:
            p = v.proposal
            mark = "…" if v.approving else STATUS_MARK.get(p.status, " ")
            mark += "⚠" if v.conflict is not None else " "
            total = f"{p.total:.2f}" if p.total is not None else "-"
            tier = TIER_SHORT.get(p.tier, p.tier[:4])
            rows.append((p.id, (mark, total, p.kind, tier, p.text.replace("\n", " "))))
        self.query_one(RowTable).refill(rows, top=view_changed)
        name = "rejected" if self.view == REJECTED else "open"
        shown = f"{len(views)} of {data.total}" if data.total > len(views) else len(views)
        extra = f", {self.recommended} recommended ★" if self.view == OPEN else ""
        approving = sum(v.approving for v in views)
        extra += f", {approving} approving…" if approving else ""
        self.sub_title = f"{name} proposals: {shown}{extra}"
        self._detail()

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._detail()

    def _detail(self) -> None:
        body = self.query_one("#proposal-body", Static)
        view = self.rows.get(self.query_one(RowTable).selected_key() or "")
        if view is None:
            body.update("No proposal here." if not self.rows else "")
            return
        body.update(render_proposal(view))

    # -- actions ---------------------------------------------------------------------------

    def _current(self):
        view = self.rows.get(self.query_one(RowTable).selected_key() or "")
        if view is None:
            self.notify("No proposal selected.", severity="warning")
        return view.proposal if view else None

    @work(thread=True, exit_on_error=False, group="action")
    def approve(self, proposal_id: str, edit: str | None, notice: str) -> None:
        """Approve (optionally edited) in a worker (undoable with z)."""
        with self.as_operator():
            elora.approve(self.services, proposal_id, edit=edit)
        self.post_message(Decided(notice + self.undo_hint()))

    @work(thread=True, exit_on_error=False, group="action")
    def reject(self, proposal_id: str, notice: str) -> None:
        """Reject in a worker."""
        elora.reject(self.services, proposal_id)
        self.post_message(Decided(notice))

    @work(thread=True, exit_on_error=False, group="action")
    def restore(self, proposal_id: str, notice: str) -> None:
        """Restore a rejected proposal in a worker."""
        elora.restore(self.services, proposal_id)
        self.post_message(Decided(notice))

    @work(thread=True, exit_on_error=False, group="action")
    def approve_all_recommended(self) -> None:
        """Approve every recommended proposal in a worker."""
        with self.as_operator():
            entries = elora.approve_recommended(self.services)
        self.post_message(Decided(f"approved {len(entries)} recommended{self.undo_hint()}"))

    def on_decided(self, decided: Decided) -> None:
        self.notify(decided.notice)
        self.action_refresh_data()

    def action_approve(self) -> None:
        p = self._current()
        if p is not None:
            self.approve(p.id, None, f"approved: {p.text[:40]}")

    def action_edit(self) -> None:
        p = self._current()
        if p is None:
            return

        def edited(text: str | None) -> None:
            if text:
                self.approve(p.id, text, "edited and approved")

        self.app.push_screen(EditDialog("Edit, then approve", p.text), edited)

    def action_reject(self) -> None:
        p = self._current()
        if p is not None:
            self.reject(p.id, "rejected (v shows the rejected ones, u restores)")

    def action_approve_recommended(self) -> None:
        if not self.recommended:
            self.notify("No recommended proposal to approve.", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.approve_all_recommended()

        question = f"Approve all {self.recommended} recommended proposal(s)?"
        self.app.push_screen(ConfirmDialog(question, yes="Approve"), confirmed)

    def action_restore(self) -> None:
        p = self._current()
        if p is not None:
            self.restore(p.id, f"restored: {p.text[:40]}")

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
