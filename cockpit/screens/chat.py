"""Chat: the same pipeline as every surface, with the evidence pack and routing beside it."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Input, RichLog, Static

from cockpit.screens.base import EloraScreen

CHAT_ID = "cockpit"


class ChatScreen(EloraScreen):
    """Type a message; the answer, its evidence and its routing appear."""

    auto_refresh_seconds = None
    BINDINGS = [Binding("escape", "leave_input", "Leave input", show=False)]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="chat-main"):
                yield RichLog(id="chat-log", wrap=True, markup=True)
                yield Input(placeholder="Message Elora… (Enter to send)", id="chat-input")
            with VerticalScroll(id="chat-side", classes="detail"):
                yield Static(
                    "The evidence pack and routing of the last answer show here.", id="chat-trace"
                )
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#chat-input", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one(RichLog).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        event.input.value = ""
        self.query_one(RichLog).write(f"[b]you[/b] {escape(text)}")
        self.background(lambda: self._ask(text), self._answered, group="chat")

    def _ask(self, text: str):
        from core.pipeline import Request

        request = Request(surface="cockpit", chat_id=CHAT_ID, text=text, user_id="operator",
                          sender="operator")  # fmt: skip
        return self.app.loop_runner.run(self.services.assistant.handle(request))  # type: ignore[attr-defined]

    def _answered(self, reply) -> None:
        log = self.query_one(RichLog)
        style = "" if reply.status == "answered" else "[yellow]"
        log.write(f"[b]elora[/b] {style}{escape(reply.text)}")
        self.query_one("#chat-trace", Static).update(render_trace(reply))


def render_trace(reply) -> Group:
    """The pack (layers, items with tier labels and sources) and the routing of one reply."""
    parts: list[Any] = []
    summary = reply.summary()
    models = " → ".join(f"{c['tier']}:{c['model']}" for c in summary["models"]) or "no model call"
    cost = summary["cost"]
    parts += [
        "[b]Routing[/b]",
        f"start {summary['start_tier'] or '-'} · final {summary['final_tier'] or '-'} · {summary['status']}",
        escape(models),
        f"tokens {summary['tokens_in']} in / {summary['tokens_out']} out · cost {'unknown' if cost is None else f'${cost:.5f}'}",
    ]
    for esc in summary["escalations"]:
        parts.append(f"escalated {esc['from']} → {esc['to']}")
    for call in summary["tool_calls"]:
        parts.append(f"tool {call['name']} ({'ok' if call['ok'] else 'error'})")
    pack = reply.pack.to_json() if reply.pack else None
    if pack:
        c = pack["classification"]
        parts += ["", "[b]Evidence pack[/b]",
                  f"{c['intent']} · memory {c['memory_need']} · {pack['budget']['used']}/{pack['budget']['total']} tokens"
                  + (" · DEGRADED" if pack["degraded"] else "")]  # fmt: skip
        for name, layer in pack["layers"].items():
            if not layer["ran"]:
                continue
            parts.append(f"[b]{name}[/b] {layer['title']} ({len(layer['items'])})")
            for item in layer["items"]:
                source = (item.get("sources") or [{}])[0]
                where = source.get("file") or " ".join(
                    str(source[k]) for k in ("surface", "chat_id", "date") if source.get(k)
                )
                parts.append(
                    f"  [{item['tier']}:{item['tier_meaning']}] {escape(item['text'][:90])}"
                )
                if where:
                    parts.append(f"    [dim]{escape(where[:60])}[/dim]")
        for missing in pack["missing"]:
            parts.append(f"[dim]missing: {escape(missing)}[/dim]")
    return Group(*parts)
