"""`elora doctor [--json]`: is everything in place?"""

from __future__ import annotations

NAME = "doctor"
HELP = "check configuration, stores, embedder and spool backlog"


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        report = app.health(svc)
    finally:
        svc.close()
    if args.json:
        print_json(report.to_json())
        return 0 if report.ok else 1
    from rich.table import Table

    table = Table(title="elora doctor")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in report.checks:
        table.add_row(check.name, "ok" if check.ok else "FAIL", check.detail)
    out = console()
    out.print(table)
    counts = Table(title="counts")
    counts.add_column("what")
    counts.add_column("how many", justify="right")
    for key, value in report.counts.items():
        counts.add_row(key, f"{value:,}")
    out.print(counts)
    return 0 if report.ok else 1
