"""`elora import-markdown DIR`: edits made in the mirror come back as proposals."""

from __future__ import annotations

NAME = "import-markdown"
HELP = "turn edits made in a Markdown mirror into proposals (no direct writes)"


def configure(parser) -> None:
    parser.add_argument("directory", help="a mirror written by export-markdown")
    parser.add_argument("--json", action="store_true")


def run(args) -> int:
    import sys
    from pathlib import Path

    from core import app
    from core.cli.context import print_json, services

    svc = services()
    try:
        outcome = app.import_mirror(svc, Path(args.directory))
    finally:
        svc.close()
    if args.json:
        print_json(outcome)
    else:
        deleted = outcome["forget_proposals"]
        print(
            f"{len(outcome['proposals'])} proposal(s) from edits, {outcome['unchanged']} unchanged"
            + (f", {len(deleted)} proposal(s) to forget (files deleted)" if deleted else "")
            + (
                f", {outcome['forgotten']} forgotten (not re-proposed)"
                if outcome["forgotten"]
                else ""
            )
        )
        for error in outcome["errors"]:
            print(f"skipped: {error}", file=sys.stderr)
    return 0
