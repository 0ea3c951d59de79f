"""`elora proposals`: review what Elora would like to remember."""

from __future__ import annotations

NAME = "proposals"
HELP = "list proposals, or approve / reject / restore them"


def configure(parser) -> None:
    parser.add_argument(
        "--status",
        default="open",
        help="open (default), pending, recommended, rejected, approved, all",
    )
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="print JSON")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    approve = sub.add_parser("approve", help="approve a proposal (or all recommended ones)")
    approve.add_argument("id", nargs="?", help="proposal id (a unique prefix works)")
    approve.add_argument("--edit", help="replace the text before approving")
    approve.add_argument("--recommended", action="store_true", help="approve every recommended one")
    reject = sub.add_parser("reject", help="reject a proposal (restorable)")
    reject.add_argument("id")
    reject.add_argument("--note", help="why")
    restore = sub.add_parser("restore", help="bring a rejected proposal back")
    restore.add_argument("id")


def _statuses(status: str):
    if status == "open":
        return ("pending", "recommended")
    if status == "all":
        return None
    return (status,)


def run(args) -> int:
    from core import app
    from core.cli.commands.undo import FORGET_NOTE, hint
    from core.cli.context import print_json, services

    svc = services()
    try:
        if args.action == "approve":
            with app.acting("cli") as who:
                if args.recommended:
                    entries = app.approve_recommended(svc)
                    print(f"approved {len(entries)} recommended proposal(s){hint(who)}")
                    return 0
                if not args.id:
                    print("elora: give a proposal id or --recommended")
                    return 2
                entry = app.approve(svc, args.id, edit=args.edit)
            if entry.status == "forgotten":
                print(f"approved: forgot {entry.memory_id}. {FORGET_NOTE}")
                return 0
            print(f"approved → {entry.memory_id} ({entry.tier}/{entry.kind}){hint(who)}")
            return 0
        if args.action == "reject":
            p = app.reject(svc, args.id, note=args.note)
            print(f"rejected {p.id[:8]} (restore with `elora proposals restore {p.id[:8]}`)")
            return 0
        if args.action == "restore":
            p = app.restore(svc, args.id)
            print(f"restored {p.id[:8]} as {p.status}")
            return 0
        views = app.review_queue(svc, _statuses(args.status), limit=args.limit)
    finally:
        svc.close()
    if args.json:
        out = []
        for v in views:
            other = v.conflict
            data = app.proposal_json(v.proposal)
            data["conflict"] = (
                {"memory_id": other.memory_id, "text": other.canonical_text} if other else None
            )
            out.append(data)
        print_json(out)
        return 0
    from rich.table import Table

    from core.cli.context import console

    table = Table(title=f"{len(views)} proposal(s)")
    for col in ("id", "status", "A-MAC", "kind/tier", "text", "conflict"):
        table.add_column(col, overflow="fold")
    for v in views:
        p, other = v.proposal, v.conflict
        status = f"{p.status} (approving…)" if v.approving else p.status
        conflict = (
            f"{p.conflict_relation}: {other.memory_id} — {other.canonical_text}" if other else ""
        )
        total = f"{p.total:.2f}" if p.total is not None else "-"
        table.add_row(p.id[:8], status, total, f"{p.kind}/{p.tier}", p.text, conflict)
    console().print(table)
    return 0
