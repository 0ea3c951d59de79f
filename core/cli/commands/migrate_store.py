"""`elora migrate-store --to URL`: copy this home's database to another one (PostgreSQL)."""

from __future__ import annotations

import sys

NAME = "migrate-store"
HELP = (
    "copy every table of this home's database into an empty one (e.g. "
    "postgresql+psycopg://user@host/elora) and check the row counts; vectors stay in the "
    "same Chroma unless --rebuild-vectors"
)


def configure(parser) -> None:
    parser.add_argument("--to", required=True, metavar="URL", help="the target database URL")
    parser.add_argument(
        "--rebuild-vectors",
        action="store_true",
        help="embed everything again into the configured Chroma (another server or model)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services
    from core.config import load_settings

    # The target URL is checked like ELORA_DATABASE_URL (postgresql:// becomes +psycopg).
    target_url = load_settings(database_url=args.to).resolved_database_url
    svc = services()
    say = (lambda line: print(line, file=sys.stderr)) if args.json else print
    try:
        report = app.migrate_store(svc, target_url, args.rebuild_vectors, say)
    finally:
        svc.close()
    if args.json:
        print_json(report.to_json())
    else:
        for table, counts in report.tables.items():
            mark = "ok" if counts["source"] == counts["target"] else "MISMATCH"
            print(f"{table:<20} {counts['source']:>10,} → {counts['target']:>10,}  {mark}")
        verdict = "verified" if report.verified else "NOT verified"
        print(f"copied to {report.target}: every table {verdict}; vectors {report.vectors}")
        if report.verified:
            print(f"now set ELORA_DATABASE_URL={report.target} (and keep the same Chroma)")
    return 0 if report.verified and report.vectors != "incomplete" else 1
