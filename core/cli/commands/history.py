"""`elora history MEMORY_ID`: every version of an entry, the change that made it, and the
actions on it that can still be undone."""

from __future__ import annotations

NAME = "history"
HELP = (
    "an entry's versions (what changed, when, on which surface) and the actions on it that can "
    "still be undone"
)


def configure(parser) -> None:
    parser.add_argument("memory_id", help="exact memory_id (see `elora memories`)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        found = app.entry_history(svc, args.memory_id)
        versions, actions = found.versions, found.undoable
        now = svc.clock.now()
    finally:
        svc.close()
    if args.json:
        print_json({"memory_id": args.memory_id, "versions": [v.to_json() for v in versions],
                    "undoable": [a.to_json() for a in actions]})  # fmt: skip
        return 0
    from rich.table import Table

    table = Table(title=f"{args.memory_id}: {len(versions)} version(s)")
    for column in ("v", "at", "change", "surface", "status", "imp", "text"):
        table.add_column(column, overflow="fold")
    for v in versions:
        who = v.surface + (f" ({v.actor})" if v.actor else "")
        table.add_row(str(v.version), f"{v.created_at:%Y-%m-%d %H:%M}", v.change, who,
                      v.data["status"], str(v.data["importance"]),
                      v.data["canonical_text"])  # fmt: skip
    console().print(table)
    for a in actions:
        print(f"can be undone for {a.minutes_left(now)} more minute(s): {a.kind} {a.id[:8]} "
              f"({a.surface}, {a.created_at:%H:%M}) — `elora undo {a.id[:8]}`")  # fmt: skip
    print(f"restore a version with `elora restore {args.memory_id} --version N`")
    return 0
