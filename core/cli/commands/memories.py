"""`elora memories`: list maintained entries with filters."""

from __future__ import annotations

NAME = "memories"
HELP = "list memory entries (filter by tier, scope, topic, status)"


def configure(parser) -> None:
    parser.add_argument("--tier")
    parser.add_argument("--scope")
    parser.add_argument("--topic")
    parser.add_argument("--status", default="active", help="active, superseded, deprecated or all")
    parser.add_argument("--search", help="hybrid search instead of listing")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        page = app.browse_memory(
            svc, text=args.search or "", mode="semantic", tier=args.tier, scope=args.scope,
            topic=args.topic, status=None if args.status == "all" else args.status,
            limit=args.limit, offset=args.offset,
        )  # fmt: skip
    finally:
        svc.close()
    rows = page.entries
    if args.json:
        print_json([app.entry_json(r) for r in rows])
        return 0
    from rich.table import Table

    table = Table(title=f"{len(rows)} memories")
    for column in ("memory_id", "tier", "kind", "imp", "conf", "topics", "text"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(
            r.memory_id, r.tier, r.kind, str(r.importance), f"{r.confidence:.2f}",
            ", ".join(r.topics), r.canonical_text,
        )  # fmt: skip
    console().print(table)
    return 0
