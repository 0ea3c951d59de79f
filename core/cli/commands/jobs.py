"""`elora jobs list|run NAME`: the scheduled jobs, runnable one-shot."""

from __future__ import annotations

NAME = "jobs"
HELP = "list scheduled jobs or run one now"


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="list jobs")
    listing.add_argument("--json", action="store_true", help="print JSON")
    run = sub.add_parser("run", help="run one job now")
    run.add_argument("name", help="job name, e.g. replay-spool")
    run.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    import asyncio
    import sys

    from core import app
    from core.cli.context import print_json, services

    if args.action == "list":
        svc = services()
        try:
            jobs = app.jobs(svc)
        finally:
            svc.close()
        rows = [
            {"name": j.name, "every_minutes": j.every_minutes, "description": j.description,
             "last_run": last}
            for j, last in jobs
        ]  # fmt: skip
        if args.json:
            print_json(rows)
        else:
            for row in rows:
                print(
                    f"{row['name']:<16} every {row['every_minutes']:>4} min  {row['description']}"
                )
        return 0
    from core.errors import EloraError

    app.get_job(args.name)  # an unknown name is a usage error, reported by main
    svc = services()
    try:
        outcome = asyncio.run(app.run_job(svc, args.name))
    except Exception as exc:  # any failure of the job: recorded by run_job, reported here
        kind = "" if isinstance(exc, EloraError) else f"{type(exc).__name__}: "
        print(f"elora: job {args.name} failed: {kind}{exc}", file=sys.stderr)
        return 1
    finally:
        svc.close()
    if args.json:
        print_json(outcome)
    else:
        print(", ".join(f"{k}={v}" for k, v in outcome.items()))
    return 0
