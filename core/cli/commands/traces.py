"""`elora traces`: recent requests with their models (the escalation path) and cost."""

from __future__ import annotations

NAME = "traces"
HELP = "recent requests: surface, intent, models as the escalation path (LITE→FLASH), cost"


def configure(parser) -> None:
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--chat", dest="chat_id", help="only this conversation")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        rows = app.trace_rows(svc, args.limit, chat_id=args.chat_id)
        spent = app.spent_today(svc)
    finally:
        svc.close()
    if args.json:
        print_json(rows)
        return 0
    from rich.table import Table

    table = Table(title=f"{len(rows)} recent request(s) · ${spent:.4f} spent today")
    for column in ("id", "time", "surface", "intent", "models", "ms", "cost", "status"):
        table.add_column(column, overflow="fold")
    for r in rows:
        cost = "?" if r["cost"] is None else f"{r['cost']:.5f}"
        table.add_row(r["id"][:8], r["created_at"][5:16].replace("T", " "), r["surface"],
                      str(r["intent"] or "-"), r["models"], str(r["latency_ms"]), cost,
                      r["error"] or "ok")  # fmt: skip
    console().print(table)
    return 0
