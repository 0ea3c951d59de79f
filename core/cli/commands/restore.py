"""`elora restore MEMORY_ID --version N`: bring an entry back to an earlier version."""

from __future__ import annotations

NAME = "restore"
HELP = "bring an entry back to version N of its history, as a new version (undoable)"


def configure(parser) -> None:
    parser.add_argument("memory_id", help="exact memory_id (see `elora history MEMORY_ID`)")
    parser.add_argument("--version", type=int, required=True, help="the version to bring back")
    parser.add_argument("--json", action="store_true", help="print the entry as JSON")


def run(args) -> int:
    from core import app
    from core.cli.commands.undo import hint
    from core.cli.context import print_json, services

    svc = services()
    try:
        with app.acting("cli") as who:
            entry, now = app.restore_version(svc, args.memory_id, args.version)
    finally:
        svc.close()
    if args.json:
        print_json({**app.entry_json(entry), "version": now, "action_id": who.last_action})
        return 0
    print(f"restored {entry.memory_id} to version {args.version} (now version {now}){hint(who)}")
    return 0
