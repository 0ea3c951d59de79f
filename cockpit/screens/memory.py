"""Memory: browse entries by tier/scope/topic/status, search, provenance, roots and history,
what is fading soon and why, restore a faded entry, forget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from cockpit.screens.base import TIER_SHORT, EloraScreen, refill
from cockpit.widgets.dialogs import ConfirmDialog
from core.memory.fading import SOON_DAYS
from core.memory.schema import PROMOTED_FROM, STATUSES, TIERS

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
            yield Select([(t, t) for t in TIERS], prompt="any tier", id="tier")
            yield Select([(s, s) for s in (*STATUSES, FADING)], value="active",
                         allow_blank=True, prompt="any status", id="status")  # fmt: skip
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
        table = self.query_one(DataTable)
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

    def load(self, q: MemoryQuery) -> dict[str, Any]:
        memory = self.services.memory
        if q.status == FADING and not q.text:
            return self._load_fading(q)
        if q.text:
            if q.mode == "semantic":
                statuses = (q.status,) if q.status else STATUSES
                hits, degraded = memory.search(q.text, PAGE, statuses=statuses,
                                               tiers=[q.tier] if q.tier else None,
                                               scopes=[q.scope] if q.scope else None)  # fmt: skip
                rows = [h.entry for h in hits]
            else:
                rows, degraded = memory.fulltext(q.text, PAGE, q.status), False
                rows = [e for e in rows if (not q.tier or e.tier == q.tier)
                        and (not q.scope or e.scope == q.scope)]  # fmt: skip
            if q.topic:
                rows = [e for e in rows if q.topic.lower() in e.topics]
            total = len(rows)
        else:
            rows = memory.list(tier=q.tier, scope=q.scope, topic=q.topic, status=q.status,
                               limit=PAGE, offset=q.offset)  # fmt: skip
            total, degraded = (
                memory.count(q.status, tier=q.tier, scope=q.scope, topic=q.topic),
                False,
            )
        return {"query": q, "rows": rows, "total": total, "degraded": degraded}

    def _load_fading(self, q: MemoryQuery) -> dict[str, Any]:
        """Active entries due to fade within SOON_DAYS, soonest first, with when."""
        from core.ids import memory_uuid
        from core.memory.fading import schedule

        due = schedule(self.services, within_days=SOON_DAYS)
        found = self.services.memory.by_uuids([memory_uuid(life.memory_id) for life in due])
        rows = [found[memory_uuid(life.memory_id)] for life in due
                if memory_uuid(life.memory_id) in found]  # fmt: skip
        rows = [e for e in rows if (not q.tier or e.tier == q.tier)
                and (not q.scope or e.scope == q.scope)
                and (not q.topic or q.topic.lower() in e.topics)]  # fmt: skip
        fades = {life.memory_id: life.fades_at for life in due}
        return {"query": q, "rows": rows, "total": len(rows), "degraded": False, "fades": fades}

    def _details(self, entry) -> dict[str, Any]:
        """Links, history, versions and fading schedule of an entry (fetched in a worker, not
        on the UI thread)."""
        from core.memory.fading import lifetime, recall_counts
        from core.memory.versions import history

        memory = self.services.memory
        links = memory.links_of([entry.uuid])
        related = memory.by_uuids([u for link in links for u in (link.from_uuid, link.to_uuid)])
        versions = history(self.services, entry.memory_id) if memory.get(entry.memory_id) else []
        life = lifetime(entry, *recall_counts(self.services, [entry.uuid])[entry.uuid])
        return {"uuid": entry.uuid, "links": links, "related": related, "versions": versions,
                "lifetime": life}  # fmt: skip

    def show(self, data: dict[str, Any]) -> None:
        q: MemoryQuery = data["query"]
        self.entries = {e.memory_id: e for e in data["rows"]}
        self.total = data["total"]
        fades = data.get("fades", {})

        def text(e) -> str:
            when = f"fades {fades[e.memory_id]:%Y-%m-%d} · " if e.memory_id in fades else ""
            return when + e.canonical_text.replace("\n", " ")

        rows = [(e.memory_id, (e.memory_id, TIER_SHORT.get(e.tier, e.tier[:4]), str(e.importance),
                               text(e))) for e in data["rows"]]  # fmt: skip
        moved, self.shown_query = self.shown_query != q, q
        changed = refill(self.query_one(DataTable), rows, top=moved)
        if q.status == FADING and not q.text:
            where = (f"{self.total} fading within {SOON_DAYS} days, soonest first "
                     "(the detail says why; u restores a faded entry)")  # fmt: skip
        elif q.text:
            where = f"{q.mode} search {q.text!r}: {self.total} found (esc clears)"
            if data["degraded"]:
                where += " · DEGRADED: embeddings unavailable, lexical only"
        elif not self.total:
            where = "no entry matches these filters"
        else:
            last = q.offset + len(data["rows"])
            where = f"rows {q.offset + 1:,}–{last:,} of {self.total:,}  (] next, [ previous)"
        self.query_one("#memory-page", Static).update(where)
        if changed or _detail_key(self._selected()) != self.detail_key:
            self._load_detail()

    def refresh_costly(self) -> None:
        self.detail_key = None  # ctrl+r also reloads the selected entry's links

    def _selected(self):
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.entries.get(key)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        if _detail_key(self._selected()) != self.detail_key:  # not already asked for by show()
            self._load_detail()

    def _load_detail(self) -> None:
        entry = self._selected()
        self.detail_key = _detail_key(entry)
        if entry is None:
            self.query_one("#memory-body", Static).update("No entry here.")
            return
        self.background(lambda: self._details(entry), self._render_detail, group="detail")

    def _render_detail(self, details: dict[str, Any]) -> None:
        entry = self._selected()
        if entry is not None and entry.uuid == details["uuid"]:
            self.query_one("#memory-body", Static).update(render_entry(entry, details))

    # -- actions ---------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            self.query_text = event.value.strip()
        self.page_start = 0
        self.query_one(DataTable).focus()  # so ] [ f and the arrows act on the results
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
        self.query_one(DataTable).focus()
        self.action_refresh_data()

    def action_toggle_mode(self) -> None:
        self.mode = "semantic" if self.mode == "full-text" else "full-text"
        self.notify(f"search mode: {self.mode}")
        if self.query_text:
            self.action_refresh_data()

    def action_cycle(self, which: str) -> None:
        """t / x: step the tier or status filter through its values and back to any."""
        select = self.query_one(f"#{which}", Select)
        values = [None, *(TIERS if which == "tier" else (*STATUSES, FADING))]
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

    def action_restore(self) -> None:
        """u: bring a faded entry back to recall, with a fresh lifetime."""
        from core.memory.fading import restore

        entry = self._selected()
        if entry is None or entry.status != "faded":
            self.notify("Only a faded entry can be restored (x shows the faded ones).",
                        severity="warning")  # fmt: skip
            return
        self.background(self.as_operator(lambda: restore(self.services, entry.memory_id)),
                        lambda r: self.action_refresh_data(),
                        success=f"restored {entry.memory_id}{self.undo_hint()}")  # fmt: skip

    def action_forget(self) -> None:
        from core.memory.unforget import forget, undo_note

        entry = self._selected()
        if entry is None:
            self.notify("No entry selected.", severity="warning")
            return
        held = self.services.settings.undo_minutes > 0
        after = f" · z: {undo_note(self.services)}" if held else ""

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.background(self.as_operator(lambda: forget(self.services, entry.memory_id)),
                                lambda r: self.action_refresh_data(),
                                success=f"forgot {entry.memory_id}{after}")  # fmt: skip

        then = (f"It is erased from every store; {undo_note(self.services)}." if held
                else "It is erased from every store; this cannot be undone.")  # fmt: skip
        question = f"Forget {entry.memory_id}?\n\n{entry.canonical_text[:200]}\n\n{then}"
        self.app.push_screen(ConfirmDialog(question, yes="Forget"), confirmed)


def _detail_key(entry) -> tuple[str, str] | None:
    """What the detail pane depends on beyond the table row: which entry, and its status."""
    return None if entry is None else (entry.uuid, entry.status)


def render_entry(entry, details: dict[str, Any]) -> Group:
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
    parts += _fading_lines(entry, details.get("lifetime"))
    related = details.get("related", {})
    mine = [x for x in details.get("links", []) if entry.uuid in (x.from_uuid, x.to_uuid)]
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
    versions = details.get("versions") or []
    if len(versions) > 1:  # one version is the entry as shown above
        parts += ["", f"[b]Versions[/b] (elora history {escape(entry.memory_id)})"]
        for v in versions[-VERSIONS_SHOWN:]:
            parts.append(escape(f"v{v.version} {v.created_at:%Y-%m-%d %H:%M} {v.change} "
                                f"({v.surface}) · {v.data['status']}: "
                                f"{v.data['canonical_text'][:80]}"))  # fmt: skip
    return Group(*parts)


def _fading_lines(entry, life) -> list[Any]:
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
