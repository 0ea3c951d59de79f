"""Council: pick skills, ask a question, watch the rounds arrive, read the synthesis."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, RichLog, SelectionList

from cockpit.screens.base import EloraScreen


class CouncilScreen(EloraScreen):
    """Start a round table and follow it round by round."""

    auto_refresh_seconds = None
    BINDINGS = [Binding("ctrl+g", "convene", "Convene")]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="council-setup"):
                yield SelectionList[str](id="skills")
                yield Input(
                    placeholder="Question for the council (Enter to convene)", id="council-question"
                )
            yield RichLog(id="council-log", wrap=True, markup=True)
        yield Footer()

    def load(self):
        from core.council.skills import list_skills

        return list_skills(self.services)

    def show(self, skills) -> None:
        selection = self.query_one(SelectionList)
        chosen = set(selection.selected)
        selection.clear_options()
        for skill in skills:
            selection.add_option((f"{skill.name} — {skill.description[:50]}", skill.skill_id,
                                  skill.skill_id in chosen))  # fmt: skip

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.action_convene()

    def action_convene(self) -> None:
        question = self.query_one("#council-question", Input).value.strip()
        skills = list(self.query_one(SelectionList).selected)
        log = self.query_one(RichLog)
        if not question:
            self.notify("Type a question first.", severity="warning")
            return
        log.write(
            f"[b]Council[/b] on: {escape(question)} — {', '.join(skills) or 'no skills selected'}"
        )
        self.background(lambda: self._convene(question, skills), self._done, group="council")

    def _convene(self, question: str, skills: list[str]):
        from core.council.council import consult_council

        async def on_round(number: int, record: dict) -> None:
            self.app.call_from_thread(self._round, number, record)

        coroutine = consult_council(self.services, question, skills, surface="cockpit",
                                    chat_id="cockpit", on_round=on_round)  # fmt: skip
        return self.app.loop_runner.run(coroutine)  # type: ignore[attr-defined]

    def _round(self, number: int, record: dict) -> None:
        log = self.query_one(RichLog)
        log.write(f"[b]Round {number}[/b]")
        for c in record["contributions"]:
            log.write(f"[b]{c['participant']}[/b] ({c['role']}): {escape(c['text'])}")
        for f in record["failures"]:
            log.write(f"[red]{f['participant']} failed: {escape(f['error'])}[/red]")

    def _done(self, transcript) -> None:
        log = self.query_one(RichLog)
        log.write("[b]Synthesis[/b]")
        log.write(escape(transcript["synthesis"]["text"]))
        cost = transcript["cost"]
        log.write(f"[dim]{transcript['calls']} calls · {transcript['tokens_in']}+{transcript['tokens_out']} tokens · "
                  f"cost {'unknown' if cost is None else f'${cost:.5f}'}[/dim]")  # fmt: skip
