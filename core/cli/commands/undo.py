"""`elora undo [ACTION_ID]`: take back an approval, edit, supersede, remember or restore."""

from __future__ import annotations

NAME = "undo"
HELP = (
    "undo the last approval, edit, remember or restore (or the action given), within "
    "ELORA_UNDO_MINUTES; --list shows what can be undone"
)
FORGET_NOTE = (
    "A forget made by `elora forget` cannot be undone: its undo would live only in the memory "
    "of that one-shot process (nothing of it is kept on disk). Forgets made in the cockpit or "
    "the bot can be undone there while they run."
)


def configure(parser) -> None:
    parser.add_argument("action_id", nargs="?", help="the action to undo (see --list)")
    parser.add_argument("--list", action="store_true", help="list the actions that can be undone")
    parser.add_argument("--json", action="store_true", help="print JSON")


def hint(acting) -> str:
    """The line a command prints after an undoable action ('' when there was none)."""
    if acting.last_action is None:
        return ""
    return f" (undo with `elora undo {acting.last_action[:8]}`)"


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services

    svc = services()
    try:
        if args.list:
            actions, now = app.undoable_actions(svc), svc.clock.now()
        else:
            with app.acting("cli"):
                done = app.undo(svc, args.action_id)
    finally:
        svc.close()
    if args.list:
        return _list(actions, now, args.json)
    if args.json:
        print_json(done.to_json())
    else:
        print(done.summary())
    return 0


def _list(actions, now, as_json: bool) -> int:
    from core.cli.context import console, print_json

    if as_json:
        print_json([a.to_json() for a in actions])
        return 0
    if not actions:
        print("nothing to undo")
        print(FORGET_NOTE)
        return 0
    from rich.table import Table

    table = Table(title=f"{len(actions)} action(s) that can be undone")
    for column in ("id", "kind", "target", "surface", "at", "minutes left", "note"):
        table.add_column(column, overflow="fold")
    for a in actions:
        note = f"held by {a.data.get('held_by')}: undo it there" if a.kind == "forget" else ""
        table.add_row(a.id[:8], a.kind, a.target[:40], a.surface, f"{a.created_at:%H:%M}",
                      str(a.minutes_left(now)), note)  # fmt: skip
    console().print(table)
    print(FORGET_NOTE)
    return 0
