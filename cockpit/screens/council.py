"""Council: pick skills, ask a question, watch the rounds arrive, read the synthesis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, Header, Input, RichLog, SelectionList

from cockpit.screens.base import EloraScreen, shown_safely
from core import app as elora


@dataclass
class RoundDone(Message):
    """A round of the council finished (posted from the background loop)."""

    number: int
    record: dict[str, Any]


@dataclass
class SkillsLoaded(Message):
    """The skills a council can seat."""

    skills: list[Any]


@dataclass
class CouncilDone(Message):
    """The council's transcript, synthesis included."""

    transcript: dict[str, Any]


class CouncilScreen(EloraScreen):
    """Start a round table and follow it round by round."""

    periodic_refresh = False
    BINDINGS = [Binding("ctrl+g", "convene", "Convene")]

    def __init__(self):
        super().__init__()
        self.skill_ids: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="council-setup"):
                yield SelectionList[str](id="skills")
                yield Input(
                    placeholder="Question for the council (Enter to convene)", id="council-question"
                )
            # min_width=1: lines wrap at the pane's width (the default 78 cut them off).
            yield RichLog(id="council-log", wrap=True, markup=True, min_width=1)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "council: space picks skills (2-5), then a question and Enter"

    def reload_data(self) -> None:
        self.load_skills()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_skills(self) -> None:
        """The skills of this home."""
        self.post_message(SkillsLoaded(elora.list_skills(self.services)))

    @shown_safely
    def on_skills_loaded(self, loaded: SkillsLoaded) -> None:
        skills = loaded.skills
        ids = [skill.skill_id for skill in skills]
        if ids == self.skill_ids:
            return  # unchanged: keep the cursor and the choices where they are
        self.skill_ids = ids
        selection = self.query_one(SelectionList)
        chosen = set(selection.selected)
        selection.clear_options()
        for skill in skills:
            selection.add_option((f"{skill.name} — {skill.description[:50]}", skill.skill_id,
                                  skill.skill_id in chosen))  # fmt: skip
        if skills:
            selection.highlighted = 0  # so space picks the first skill without a down arrow

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.action_convene()

    def action_convene(self) -> None:
        question = self.query_one("#council-question", Input).value.strip()
        skills = list(self.query_one(SelectionList).selected)
        if not question:
            self.notify("Type a question first.", severity="warning")
            return
        if any(not w.is_finished for w in self.workers if w.group == "council"):
            self.notify("A council is already sitting; wait for its synthesis.", severity="warning")
            return
        self.query_one(RichLog).write(
            f"[b]Council[/b] on: {escape(question)} — {escape(', '.join(skills)) or 'no skills selected'}"
        )
        self.convene(question, skills)

    @work(thread=True, exit_on_error=False, group="council")
    def convene(self, question: str, skills: list[str]) -> None:
        """Seat the council on the cockpit's background loop; rounds arrive as they end."""

        async def on_round(number: int, record: dict) -> None:
            # Posting never blocks: the core loop must not wait on the UI (or quitting mid-way
            # would leave it stuck waiting for a screen that is gone).
            self.post_message(RoundDone(number, record))

        coroutine = elora.council(self.services, question, skills, surface="cockpit",
                                  chat_id="cockpit", on_round=on_round)  # fmt: skip
        self.post_message(CouncilDone(self.cockpit.loop_runner.run(coroutine)))

    def on_round_done(self, message: RoundDone) -> None:
        log = self.query_one(RichLog)
        log.write(f"[b]Round {message.number}[/b]")
        record = message.record
        for c in record["contributions"]:
            log.write(
                f"[b]{escape(c['participant'])}[/b] ({escape(c['role'])}): {escape(c['text'])}"
            )
        for f in record["failures"]:
            log.write(f"[red]{escape(f['participant'])} failed: {escape(f['error'])}[/red]")

    @shown_safely
    def on_council_done(self, done: CouncilDone) -> None:
        transcript = done.transcript
        log = self.query_one(RichLog)
        log.write("[b]Synthesis[/b]")
        log.write(escape(transcript["synthesis"]["text"]))
        cost = transcript["cost"]
        log.write(f"[dim]{transcript['calls']} calls · {transcript['tokens_in']}+{transcript['tokens_out']} tokens · "
                  f"cost {'unknown' if cost is None else f'${cost:.5f}'}[/dim]")  # fmt: skip
