"""`elora import PATH... [--format auto|telegram|chatgpt] [--me NAME] [--json]`: archive exported
chats, knowing which sender is the operator."""

from __future__ import annotations

NAME = "import"
HELP = "import a Telegram Desktop export (result.json) or a ChatGPT conversations.json"


def configure(parser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="an export file, a directory holding result.json/conversations.json, or a .zip",
    )
    parser.add_argument(
        "--format",
        choices=("auto", "telegram", "chatgpt"),
        default="auto",
        help="the export's format (default: detected from its content)",
    )
    parser.add_argument(
        "--me",
        metavar="NAME",
        help="your name as a sender in the export (when it does not say who exported it)",
    )
    parser.add_argument(
        "--skip-too-long",
        action="store_true",
        help="leave out messages over the archive's length limit instead of refusing the export",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services
    from core.cli.progress import progress_bar

    plan = app.prepare_import(args.paths, args.format, args.me, skip_too_long=args.skip_too_long)
    svc = services()
    try:
        with progress_bar("importing", plan.total, unit="messages") as advance:
            report = app.run_import(svc, plan, on_progress=advance)
    finally:
        svc.close()
    if args.json:
        print_json(report.to_json())
    else:
        print(report.summary())
    return 0 if report.chunks_pending == 0 else 1
