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
    from core.cli.context import console, print_json, services
    from core.memory.api import entry_json

    svc = services()
    try:
        status = None if args.status == "all" else args.status
        if args.search:
            statuses = (status,) if status else ("active", "superseded", "deprecated")
            hits, _ = svc.memory.search(
                args.search,
                args.limit,
                scopes=[args.scope] if args.scope else None,
                tiers=[args.tier] if args.tier else None,
                statuses=statuses,
            )
            rows = [h.entry for h in hits]
        else:
            rows = svc.memory.list(
                tier=args.tier, scope=args.scope, topic=args.topic, status=status,
                limit=args.limit, offset=args.offset,
            )  # fmt: skip
    finally:
        svc.close()
    if args.json:
        print_json([entry_json(r) for r in rows])
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
