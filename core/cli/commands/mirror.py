"""`elora export-markdown DIR` / `elora import-markdown DIR`: the Markdown mirror."""

from __future__ import annotations

NAME = "export-markdown"
HELP = "write a private Markdown snapshot of memory (never modifies the database)"


def configure(parser) -> None:
    parser.add_argument("directory", help="where to write the mirror")
    parser.add_argument("--json", action="store_true")


def run(args) -> int:
    from pathlib import Path

    from core import app
    from core.cli.context import print_json, services

    svc = services()
    try:
        outcome = app.export_mirror(svc, Path(args.directory))
    finally:
        svc.close()
    if args.json:
        print_json(outcome)
    else:
        print(f"exported {outcome['entries']} entries to {outcome['directory']}")
    return 0
