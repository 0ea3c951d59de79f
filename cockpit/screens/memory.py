"""Memory: browse entries by tier/scope/topic/status, search, provenance, roots and history,
what is fading soon and why, restore a faded entry, forget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from cockpit.screens.base import EloraScreen, shown_safely
from cockpit.widgets.dialogs import ConfirmDialog
from cockpit.widgets.tables import RowTable
from core import app as elora
from core.memory.vocabulary import MEMORY_TIERS, PROMOTED_FROM, STATUSES, TIER_SHORT

PAGE = 50
VERSIONS_SHOWN = 6
# A view beside the statuses: active entries due to fade within SOON_DAYS, soonest first.
FADING = "fading soon"

# How a link reads from the entry it points at.
PASSIVE = {"supersedes": "superseded by", "deprecates": "deprecated by",
           "contradicts": "contradicted by", "confirms": "confirmed by",
           "limits-in-time": "limited in time by", PROMOTED_FROM: "promoted into"}  # fmt: skip


@dataclass(frozen=True)
class MemoryQuery:
    """Everything one load depends on, read from the widgets on the UI thread."""

    text: str
    mode: str
    tier: str | None
    status: str | None
    scope: str | None
    topic: str | None
    offset: int


@dataclass
class PageLoaded(Message):
    """A page of entries for a query, loaded in a worker."""

    query: MemoryQuery
    page: elora.MemoryPage


@dataclass
class DetailsLoaded(Message):
    """The links and history of an entry, loaded in a worker."""

    details: elora.EntryDetails


@dataclass
class Forgotten(Message):
    """An entry was erased from every store; `held`: its undo is held in this process."""

    memory_id: str
    held: bool = False


@dataclass
class Restored(Message):
    """A faded entry is back in recall."""

    memory_id: str


class MemoryScreen(EloraScreen):
    """Entries a page at a time (never a full load), with details and forget."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search"),
        Binding("s", "toggle_mode", "Mode"),
        Binding("left_square_bracket", "page(-1)", "Prev"),
        Binding("right_square_bracket", "page(1)", "Next"),
        Binding("t", "cycle('tier')", "Tier", show=False),
        Binding("x", "cycle('status')", "Status", show=False),
        Binding("f", "forget", "Forget"),
        Binding("u", "restore", "Restore"),
        Binding("escape", "clear_search", "Clear", show=False),
    ]

    def __init__(self):
        super().__init__()
        self.page_start = 0
        self.query_text = ""
        self.mode = "full-text"
        self.entries: dict[str, Any] = {}
        self.total = 0
        self.shown_query: MemoryQuery | None = None
        self.detail_key: tuple[str, str] | None = None  # the entry whose details were asked for

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="memory-filters"):
            yield Input(placeholder="search memory (/ to focus)", id="search")
            yield Select([(t, t) for t in MEMORY_TIERS], prompt="any tier", id="tier")
            yield Select([(s, s) for s in (*STATUSES, FADING)], value="active",
                         allow_blank=True, prompt="any status", id="status")  # fmt: skip
            yield Input(placeholder="scope", id="scope")
            yield Input(placeholder="topic", id="topic")
        with Horizontal():
            with Vertical(id="memory-list"):
                yield RowTable(id="entries", cursor_type="row", zebra_stripes=True)
                yield Static("", id="memory-page", classes="hint")
            with VerticalScroll(id="memory-detail", classes="detail"):
                yield Static("No entry selected.", id="memory-body")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
        for label, width in (("memory_id", 22), ("tier", 4), ("imp", 3), ("text", 200)):
            table.add_column(label, width=width)
        table.focus()
        self.sub_title = "memory"

    def _filter(self, widget_id: str) -> str | None:
        widget = self.query_one(f"#{widget_id}")
        if isinstance(widget, Select):
            return None if widget.value in (Select.NULL, None) else str(widget.value)
        return widget.value.strip() or None

    def query_state(self) -> MemoryQuery:
        return MemoryQuery(
            text=self.query_text,
            mode=self.mode,
            tier=self._filter("tier"),
            status=self._filter("status"),
            scope=self._filter("scope"),
            topic=self._filter("topic"),
            offset=self.page_start,
        )

    def reload_data(self) -> None:
        self.load_page(self.query_state())  # read on the UI thread, used in the worker

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_page(self, q: MemoryQuery) -> None:
        """A page of entries (never a full load), one page of search results, or what fades
        soon."""
        if q.status == FADING and not q.text:
            page = elora.fading_soon(self.services, tier=q.tier, scope=q.scope, topic=q.topic)
            self.post_message(PageLoaded(q, page))
            return
        status = None if q.status == FADING else q.status
        page = elora.browse_memory(
            self.services, text=q.text, mode=q.mode, tier=q.tier, status=status,
            scope=q.scope, topic=q.topic, limit=PAGE, offset=q.offset,
        )  # fmt: skip
        self.post_message(PageLoaded(q, page))

    @shown_safely
    def on_page_loaded(self, loaded: PageLoaded) -> None:
        q, page = loaded.query, loaded.page
        self.entries = {e.memory_id: e for e in page.entries}
        self.total = page.total

        def text(e) -> str:
            fades = page.fades.get(e.memory_id)
            when = f"fades {fades:%Y-%m-%d} · " if fades else ""
            return when + e.canonical_text.replace("\n", " ")

        rows = [(e.memory_id, (e.memory_id, TIER_SHORT.get(e.tier, e.tier[:4]), str(e.importance),
                               text(e))) for e in page.entries]  # fmt: skip
        moved, self.shown_query = self.shown_query != q, q
        changed = self.query_one(RowTable).refill(rows, top=moved)
        if q.status == FADING and not q.text:
            where = (f"{self.total} fading within {elora.SOON_DAYS} days, soonest first "
                     "(the detail says why; u restores a faded entry)")  # fmt: skip
        elif q.text:
            where = f"{q.mode} search {q.text!r}: {self.total} found (esc clears)"
            if page.degraded:
                where += " · DEGRADED: embeddings unavailable, lexical only"
        elif not self.total:
            where = "no entry matches these filters"
        else:
            last = q.offset + len(page.entries)
            where = f"rows {q.offset + 1:,}–{last:,} of {self.total:,}  (] next, [ previous)"
        self.query_one("#memory-page", Static).update(where)
        if changed or _detail_key(self._selected()) != self.detail_key:
            self._load_detail()

    def refresh_costly(self) -> None:
        self.detail_key = None  # ctrl+r also reloads the selected entry's links

    def _selected(self):
        return self.entries.get(self.query_one(RowTable).selected_key() or "")

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        if _detail_key(self._selected()) != self.detail_key:  # not already asked for by show()
            self._load_detail()

    def _load_detail(self) -> None:
        entry = self._selected()
        self.detail_key = _detail_key(entry)
        if entry is None:
            self.query_one("#memory-body", Static).update("No entry here.")
            return
        self.load_details(entry)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail")
    def load_details(self, entry) -> None:
        """Links and history of an entry (a newer selection makes an older load moot)."""
        self.post_message(DetailsLoaded(elora.entry_details(self.services, entry)))

    @shown_safely
    def on_details_loaded(self, loaded: DetailsLoaded) -> None:
        entry = self._selected()
        if entry is not None and entry.uuid == loaded.details.uuid:
            self.query_one("#memory-body", Static).update(render_entry(entry, loaded.details))

    # -- actions ---------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            self.query_text = event.value.strip()
        self.page_start = 0
        self.query_one(RowTable).focus()  # so ] [ f and the arrows act on the results
        self.action_refresh_data()

    def on_select_changed(self, _event: Select.Changed) -> None:
        self.page_start = 0
        self.action_refresh_data()

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_clear_search(self) -> None:
        self.query_one("#search", Input).value = ""
        self.query_text = ""
        self.page_start = 0
        self.query_one(RowTable).focus()
        self.action_refresh_data()

    def action_toggle_mode(self) -> None:
        self.mode = "semantic" if self.mode == "full-text" else "full-text"
        self.notify(f"search mode: {self.mode}")
        if self.query_text:
            self.action_refresh_data()

    def action_cycle(self, which: str) -> None:
        """t / x: step the tier or status filter through its values and back to any."""
        select = self.query_one(f"#{which}", Select)
        values = [None, *(MEMORY_TIERS if which == "tier" else (*STATUSES, FADING))]
        current = None if select.value in (Select.NULL, None) else select.value
        following = values[(values.index(current) + 1) % len(values)]
        if following is None:
            select.clear()
        else:
            select.value = following

    def action_page(self, step: int) -> None:
        if self.query_text or self._filter("status") == FADING:
            self.notify("Search results are one page; esc returns to browsing.")
            return
        new = self.page_start + step * PAGE
        if 0 <= new < max(self.total, 1):
            self.page_start = new
            self.action_refresh_data()

    @work(thread=True, exit_on_error=False, group="action")
    def forget(self, memory_id: str) -> None:
        """Erase an entry from every store, in a worker (undoable with z while this runs)."""
        with self.as_operator() as who:
            elora.forget(self.services, memory_id)
        self.post_message(Forgotten(memory_id, held=who.last_action is not None))

    def on_forgotten(self, forgotten: Forgotten) -> None:
        after = f" · z: {elora.undo_note(self.services)}" if forgotten.held else ""
        self.notify(f"forgot {forgotten.memory_id}{after}")
        self.action_refresh_data()

    @work(thread=True, exit_on_error=False, group="action")
    def restore(self, memory_id: str) -> None:
        """Bring a faded entry back to recall, in a worker (undoable with z)."""
        with self.as_operator():
            elora.restore_memory(self.services, memory_id)
        self.post_message(Restored(memory_id))

    def on_restored(self, restored: Restored) -> None:
        self.notify(f"restored {restored.memory_id}{self.undo_hint()}")
        self.action_refresh_data()

    def action_restore(self) -> None:
        """u: bring a faded entry back to recall, with a fresh lifetime."""
        entry = self._selected()
        if entry is None or entry.status != "faded":
            self.notify("Only a faded entry can be restored (x shows the faded ones).",
                        severity="warning")  # fmt: skip
            return
        self.restore(entry.memory_id)

    def action_forget(self) -> None:
        entry = self._selected()
        if entry is None:
            self.notify("No entry selected.", severity="warning")
            return
        held = self.services.settings.undo_minutes > 0

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.forget(entry.memory_id)

        then = (f"It is erased from every store; {elora.undo_note(self.services)}." if held
                else "It is erased from every store; this cannot be undone.")  # fmt: skip
        question = f"Forget {entry.memory_id}?\n\n{entry.canonical_text[:200]}\n\n{then}"
        self.app.push_screen(ConfirmDialog(question, yes="Forget"), confirmed)


def _detail_key(entry) -> tuple[str, str] | None:
    """What the detail pane depends on beyond the table row: which entry, and its status."""
    return None if entry is None else (entry.uuid, entry.status)


def render_entry(entry, details: elora.EntryDetails) -> Group:
    """The detail pane: text, classification, provenance, links and history."""
    parts: list[Any] = [
        f"[b]{escape(entry.canonical_text)}[/b]",
        escape(
            f"{entry.memory_id} · {entry.tier} · {entry.kind} · {entry.status} · scope {entry.scope}"
        ),
        f"importance {entry.importance} · confidence {entry.confidence:.2f} · "
        f"observations {entry.observations} · {entry.truth_mode}",
        escape(f"topics: {', '.join(entry.topics) or '-'}"),
        f"created {entry.created_at:%Y-%m-%d} · touched {entry.last_touched:%Y-%m-%d}"
        + (f" · valid {entry.valid_from:%Y-%m-%d}" if entry.valid_from else "")
        + (f" → {entry.valid_to:%Y-%m-%d}" if entry.valid_to else ""),
        "",
        "[b]Provenance[/b]",
    ]
    for s in entry.sources or [{"origin": "unknown"}]:
        parts.append(escape(" · ".join(f"{k} {v}" for k, v in s.items() if v is not None)))
    parts += _fading_lines(entry, details.lifetime)
    related = details.related
    mine = [x for x in details.links if entry.uuid in (x.from_uuid, x.to_uuid)]
    if mine:
        parts += ["", "[b]Links and history[/b]"]
        for link in mine:
            outgoing = link.from_uuid == entry.uuid
            other = related.get(link.to_uuid if outgoing else link.from_uuid)
            if other is None:
                continue
            relation = link.relation if outgoing else PASSIVE.get(link.relation, link.relation)
            parts.append(escape(f"{'→' if outgoing else '←'} {relation} {other.memory_id} "
                                f"({other.status}): {other.canonical_text[:120]}"))  # fmt: skip
    versions = details.versions
    if len(versions) > 1:  # one version is the entry as shown above
        parts += ["", f"[b]Versions[/b] (elora history {escape(entry.memory_id)})"]
        for v in versions[-VERSIONS_SHOWN:]:
            parts.append(escape(f"v{v.version} {v.created_at:%Y-%m-%d %H:%M} {v.change} "
                                f"({v.surface}) · {v.data['status']}: "
                                f"{v.data['canonical_text'][:80]}"))  # fmt: skip
    return Group(*parts)


def _fading_lines(entry, life: elora.Lifetime | None) -> list[Any]:
    """When the entry fades and why, or when it faded (and that u restores it)."""
    attrs = entry.attributes or {}
    if entry.status == "faded":
        when = str(attrs.get("faded_at", ""))[:10]
        return ["", "[b]Faded[/b]", escape(f"on {when}: {attrs.get('fade_reason', '')}"),
                "u restores it (back in recall, with a fresh lifetime)"]  # fmt: skip
    if life is None or entry.status != "active":
        return []
    return ["", "[b]Fading[/b]", escape(f"fades on {life.fades_at:%Y-%m-%d}: {life.reason()}"),
            "a recall into a pack or a confirmation extends it"]  # fmt: skip
