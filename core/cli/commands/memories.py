"""`elora memories`: list maintained entries with filters."""

from __future__ import annotations

NAME = "memories"
HELP = "list memory entries (filter by tier, scope, topic, status); restore a faded one"


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    restore = sub.add_parser("restore", help="bring a faded entry back to recall")
    restore.add_argument("memory_id")
    restore.add_argument("--json", action="store_true", help="print the entry as JSON")
    fading = sub.add_parser("fading", help="entries due to fade soonest, with why and when")
    fading.add_argument("--days", type=float, default=None, help="only those due within DAYS")
    fading.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--tier")
    parser.add_argument("--scope")
    parser.add_argument("--topic")
    parser.add_argument(
        "--status", default="active", help="active, superseded, deprecated, faded or all"
    )
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


def embeds(args) -> bool:
    """A search is embedded (core.cli.main loads the model early)."""
    return bool(getattr(args, "search", None))


def run(args) -> int:
    if getattr(args, "action", None) == "restore":
        return _restore(args)
    if getattr(args, "action", None) == "fading":
        return _fading(args)
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    scores: dict[str, float] | None = None
    try:
        if args.search:
            ranked = app.search_ranked(
                svc, args.search, args.limit, status=None if args.status == "all" else args.status,
                tier=args.tier, scope=args.scope, floor=args.min_score,
            )  # fmt: skip
            rows = [h.entry for h in ranked.hits]
            scores = {h.entry.memory_id: h.score for h in ranked.hits}
        else:
            rows = app.browse_memory(
                svc, tier=args.tier, scope=args.scope, topic=args.topic,
                status=None if args.status == "all" else args.status,
                limit=args.limit, offset=args.offset,
            ).entries  # fmt: skip
    finally:
        svc.close()
    if args.json:
        if scores is None:
            print_json([app.entry_json(r) for r in rows])
        else:
            print_json([{"score": scores[r.memory_id], **app.entry_json(r)} for r in rows])
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
        _say_cut(ranked, app.SEARCH_FLOOR if args.min_score is None else args.min_score)
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


def _restore(args) -> int:
    from core import app
    from core.cli.commands.undo import hint
    from core.cli.context import print_json, services

    svc = services()
    try:
        with app.acting("cli") as who:
            entry = app.restore_memory(svc, args.memory_id)
    finally:
        svc.close()
    if args.json:
        print_json(app.entry_json(entry))
        return 0
    life = app.memory_lifetime(entry)
    until = f"; fades again on {life.fades_at:%Y-%m-%d} unless used" if life else ""
    print(f"restored {entry.memory_id}{until}{hint(who)}")
    return 0


def _fading(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        due = app.fading_schedule(svc, within_days=args.days)
    finally:
        svc.close()
    if args.json:
        print_json([life.to_json() for life in due])
        return 0
    from rich.table import Table

    table = Table(title=f"{len(due)} entries fading")
    for column in ("memory_id", "fades on", "why"):
        table.add_column(column, overflow="fold")
    for life in due:
        table.add_row(life.memory_id, f"{life.fades_at:%Y-%m-%d}", life.reason())
    console().print(table)
    return 0
