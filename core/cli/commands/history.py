"""`elora history MEMORY_ID`: every version of an entry and the change that made it."""

from __future__ import annotations

NAME = "history"
HELP = (
    "an entry's versions: what changed, when, on which surface (restore one with `elora restore`)"
)


def configure(parser) -> None:
    parser.add_argument("memory_id", help="exact memory_id (see `elora memories`)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from core.cli.context import console, print_json, services
    from core.memory.versions import history

    svc = services()
    try:
        versions = history(svc, args.memory_id)
    finally:
        svc.close()
    if args.json:
        print_json([v.to_json() for v in versions])
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
    print(f"restore one with `elora restore {args.memory_id} --version N`")
    return 0
