"""Modal dialogs: confirm, edit text, help."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Markdown, TextArea


class ConfirmDialog(ModalScreen[bool]):
    """Yes / No; Enter or y confirms, Escape or n cancels."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes"):
        super().__init__()
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button(self.yes, variant="error", id="yes")
                yield Button("Cancel", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class EditDialog(ModalScreen[str | None]):
    """Edit a text; ctrl+s saves, Escape cancels."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, title: str, text: str):
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text)
            yield TextArea(self.text, id="editor")
            yield Label("ctrl+s save and approve · escape cancel", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#editor", TextArea).focus()

    def action_save(self) -> None:
        value = self.query_one("#editor", TextArea).text.strip()
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


HELP = """\
# Elora cockpit

**Screens**: `1` proposals · `2` memory · `3` chat · `4` traces · `5` health · `6` council
(`F1`…`F6` work everywhere, even while typing)

**Proposals**: `a` approve · `e` edit then approve (`ctrl+s` saves) · `r` reject ·
`A` approve every recommended ★ (asks first) · `v` switch open/rejected · `u` restore a
rejected one. ⚠ marks a proposal that conflicts with an entry (shown side by side).

**Memory**: `/` search · `s` full-text/semantic · `t` cycle tier · `x` cycle status ·
`tab` reaches the scope and topic filters · `]`/`[` next/previous page ·
`f` forget (asks first) · `esc` clears the search; the detail pane lists the entry's versions

**Undo**: `z` undoes the last approval, edit, bulk approval or forget (within
`ELORA_UNDO_MINUTES`; a forget's undo is held in this cockpit's memory only, never on disk)

**Chat**: type and press Enter; the evidence pack and routing show on the right.
`esc` leaves the input, `i` returns to it.

**Council**: `space` picks skills (2 to 5), then type a question and press Enter (or `ctrl+g`).

**Everywhere**: screens reload every few seconds and when shown; `ctrl+r` reloads now ·
`?` this help · `q` quit
"""


class HelpScreen(ModalScreen[None]):
    """Key bindings at a glance."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        # Scrollable, focused: at 80x24 the arrows and page keys reach the end of it.
        with VerticalScroll(id="dialog"):
            yield Markdown(HELP)

    def on_mount(self) -> None:
        self.query_one("#dialog").focus()

    def action_dismiss(self) -> None:
        self.dismiss(None)
