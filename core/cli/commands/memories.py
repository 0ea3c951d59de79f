"""`elora memories`: list maintained entries with filters."""

from __future__ import annotations

NAME = "memories"
HELP = "list memory entries (filter by tier, scope, topic, status)"


def configure(parser) -> None:
    parser.add_argument("--tier")
    parser.add_argument("--scope")
    parser.add_argument("--topic")
    parser.add_argument("--status", default="active", help="active, superseded, deprecated or all")
    parser.add_argument(
        "--search", help="hybrid search instead of listing: ranked, with scores and a cut-off"
    )
    parser.add_argument(
        "--min-score",
        type=float,
        help="with --search: the relevance floor (default 0.45; 0 shows every hit)",
    )
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from core.cli.context import console, print_json, services
    from core.memory.api import SEARCH_FLOOR, entry_json, search_ranked

    svc = services()
    scores: dict[str, float] | None = None
    try:
        status = None if args.status == "all" else args.status
        if args.search:
            statuses = (status,) if status else ("active", "superseded", "deprecated")
            floor = SEARCH_FLOOR if args.min_score is None else args.min_score
            ranked = search_ranked(
                svc, args.search, args.limit, scopes=[args.scope] if args.scope else None,
                tiers=[args.tier] if args.tier else None, statuses=statuses, floor=floor,
            )  # fmt: skip
            rows = [h.entry for h in ranked.hits]
            scores = {h.entry.memory_id: h.score for h in ranked.hits}
        else:
            rows = svc.memory.list(
                tier=args.tier, scope=args.scope, topic=args.topic, status=status,
                limit=args.limit, offset=args.offset,
            )  # fmt: skip
    finally:
        svc.close()
    if args.json:
        if scores is None:
            print_json([entry_json(r) for r in rows])
        else:
            print_json([{"score": scores[r.memory_id], **entry_json(r)} for r in rows])
        return 0
    from rich.table import Table

    title = f"{len(rows)} memories"
    if scores is not None:
        title = f"{len(rows)} memories matching {args.search!r}, best first"
    table = Table(title=title)
    columns = ("memory_id", "tier", "kind", "imp", "conf", "topics", "text")
    for column in ("score", *columns) if scores is not None else columns:
        table.add_column(column, overflow="fold")
    for r in rows:
        cells = [r.memory_id, r.tier, r.kind, str(r.importance), f"{r.confidence:.2f}",
                 ", ".join(r.topics), r.canonical_text]  # fmt: skip
        table.add_row(*([f"{scores[r.memory_id]:.2f}", *cells] if scores is not None else cells))
    console().print(table)
    if scores is not None:
        _say_cut(ranked, floor)
    return 0


def _say_cut(ranked, floor: float) -> None:
    """Under a search: what the cut-off left out, or why there was none."""
    if ranked.degraded:
        print("embeddings unavailable: ranked by words only, no relevance cut-off")
    elif not ranked.hits and ranked.below:
        print(f"nothing relevant enough: {ranked.below} weak match(es) under the relevance "
              f"cut-off (score {floor:.2f}); --min-score 0 shows them anyway")  # fmt: skip
    elif ranked.below:
        print(f"{ranked.below} weaker match(es) below the relevance cut-off (score {floor:.2f}, "
              "or well under the best) left out; --min-score 0 shows them")  # fmt: skip
