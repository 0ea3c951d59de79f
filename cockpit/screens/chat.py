"""Chat: the same pipeline as every surface, with the evidence pack and routing beside it."""

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
from textual.widgets import Footer, Header, Input, RichLog, Static
from textual.worker import Worker, WorkerState

from cockpit.screens.base import EloraScreen, shown_safely
from core import app as elora

CHAT_ID = "cockpit"


@dataclass
class Answered(Message):
    """Elora's reply to a message typed in the chat."""

    reply: elora.Reply


class ChatScreen(EloraScreen):
    """Type a message; the answer, its evidence and its routing appear."""

    periodic_refresh = False
    BINDINGS = [
        Binding("escape", "leave_input", "Leave input"),
        Binding("i", "focus_input", "Type"),
    ]

    def __init__(self):
        super().__init__()
        self.waiting = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="chat-main"):
                # min_width=1: lines wrap at the pane's width (the default 78 cut them off).
                yield RichLog(id="chat-log", wrap=True, markup=True, min_width=1)
                yield Static("", id="chat-status", classes="hint")
                yield Input(placeholder="Message Elora… (Enter to send)", id="chat-input")
            with VerticalScroll(id="chat-side", classes="detail"):
                yield Static(
                    "The evidence pack and routing of the last answer show here.", id="chat-trace"
                )
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "chat (same pipeline as Telegram)"
        self.query_one("#chat-input", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one(RichLog).focus()

    def action_focus_input(self) -> None:
        self.query_one("#chat-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        event.input.value = ""
        self.query_one(RichLog).write(f"[b]you[/b] {escape(text)}")
        self._waiting(+1)
        self.ask(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # EloraScreen's handler runs too (Textual calls the handler of every class in the MRO):
        # calling it here as well showed every error twice.
        finished = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
        if event.worker.group == "chat" and event.state in finished:
            self._waiting(-1)

    def _waiting(self, step: int) -> None:
        self.waiting += step
        status = "Elora is thinking…" if self.waiting else ""
        self.query_one("#chat-status", Static).update(status)

    @work(thread=True, exit_on_error=False, group="chat")
    def ask(self, text: str) -> None:
        """The same pipeline as every surface, on the cockpit's background loop: the answer is
        shown, then learned from and traced (SPEC: after the reply)."""
        request = elora.Request(surface="cockpit", chat_id=CHAT_ID, text=text,
                                user_id="operator", sender="operator")  # fmt: skip
        run = self.cockpit.loop_runner.run
        reply = run(elora.answer(self.services, request))
        self.post_message(Answered(reply))
        run(elora.after_reply(self.services, reply))

    @shown_safely
    def on_answered(self, answered: Answered) -> None:
        reply = answered.reply
        log = self.query_one(RichLog)
        style = "" if reply.status == "answered" else "[yellow]"
        log.write(f"[b]elora[/b] {style}{escape(reply.text)}")
        self.query_one("#chat-trace", Static).update(render_trace(reply))
        if self.waiting == 1:  # this answer's exchange is being learned from (then traced)
            self.query_one("#chat-status", Static).update("Elora is learning from this exchange…")


def render_trace(reply) -> Group:
    """The routing of one reply (tiers, escalations, tokens, cost) and its evidence pack
    (layers, items with their tier labels, sources and contradictions)."""
    parts: list[Any] = []
    summary = reply.summary()
    cost = summary["cost"]
    parts += [
        "[b]Routing[/b]",
        f"start {summary['start_tier'] or '-'} → final {summary['final_tier'] or '-'} · "
        f"{summary['status']}",
    ]
    for call in summary["models"]:
        parts.append(escape(f"  {call['tier']} {call['model']}: {call['tokens_in']} in / "
                            f"{call['tokens_out']} out · {call['latency_ms']} ms"))  # fmt: skip
    if not summary["models"]:
        parts.append("  no model call")
    for esc in summary["escalations"]:
        parts.append(f"  [yellow]escalated {esc['from']} → {esc['to']}[/yellow]")
    for call in summary["tool_calls"]:
        parts.append(escape(f"  tool {call['name']} ({'ok' if call['ok'] else 'error'})"))
    parts.append(
        f"tokens {summary['tokens_in']} in / {summary['tokens_out']} out · "
        f"cost {'unknown' if cost is None else f'${cost:.5f}'}"
    )
    pack = reply.pack.to_json() if reply.pack else None
    if pack:
        c = pack["classification"]
        parts += ["", "[b]Evidence pack[/b]",
                  escape(f"{c['intent']} · memory {c['memory_need']} · "
                         f"{pack['budget']['used']}/{pack['budget']['total']} tokens")
                  + (" · [red]DEGRADED[/red]" if pack["degraded"] else "")]  # fmt: skip
        for name, layer in pack["layers"].items():
            if not layer["ran"]:
                continue
            parts.append(f"[b]{name}[/b] {escape(layer['title'])} ({len(layer['items'])})")
            for item in layer["items"]:
                label = escape(f"[{item['tier']}:{item['tier_meaning']}]")
                parts.append(f"  [cyan]{label}[/cyan] {escape(item['text'][:90])}")
                source = (item.get("sources") or [{}])[0]
                where = source.get("file") or " ".join(
                    str(source[k]) for k in ("surface", "chat_id", "date") if source.get(k)
                )
                if where:
                    parts.append(f"    [dim]{escape(where[:60])}[/dim]")
                for other in item.get("contradictions") or []:
                    parts.append(f"    [yellow]⚠ contradicts {escape(other['id'])}[/yellow]")
        for missing in pack["missing"]:
            parts.append(f"[dim]missing: {escape(missing)}[/dim]")
    return Group(*parts)
