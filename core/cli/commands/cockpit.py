"""`elora cockpit`: the terminal cockpit (Textual)."""

from __future__ import annotations

NAME = "cockpit"
HELP = "open the terminal cockpit: proposals, memory, chat, traces, health, council"


def configure(parser) -> None:
    parser.add_argument("--no-scheduler", action="store_true", help="do not run scheduled jobs")


def run(args) -> int:
    from core.cli.context import services

    svc = services()
    try:
        from cockpit.app import Cockpit

        Cockpit(svc, scheduler=not args.no_scheduler).run()
    finally:
        svc.close()
    return 0
