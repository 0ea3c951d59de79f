"""`elora forget MEMORY_ID`: erase a memory for real (asks first on a terminal)."""

from __future__ import annotations

import sys

NAME = "forget"
HELP = "forget a memory irreversibly (optionally with the messages it came from)"


def configure(parser) -> None:
    parser.add_argument("memory_id", help="exact memory_id (see `elora memories`)")
    parser.add_argument(
        "--with-sources", action="store_true", help="also erase the archived source messages"
    )
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    from core.cli.context import print_json, services
    from core.memory.api import forget_memory
    from core.memory.forget import source_capture_ids

    svc = services()
    try:
        entry = svc.memory.require(args.memory_id)
        if not args.yes:
            if not sys.stdin.isatty():
                print("elora: refusing to forget without confirmation; pass --yes", file=sys.stderr)
                return 2
            extra = ""
            if args.with_sources:
                extra = f" and {len(source_capture_ids(entry.sources))} source message(s)"
            answer = input(f"Forget {entry.memory_id}{extra}? This cannot be undone. [y/N] ")
            if answer.strip().lower() not in ("y", "yes", "o", "oui"):
                print("kept")
                return 1
        report = forget_memory(svc, args.memory_id, with_sources=args.with_sources)
    finally:
        svc.close()
    if args.json:
        print_json(report.__dict__)
    else:
        print(
            f"forgot {report.memory_id}"
            + (f" and {report.removed_captures} source message(s)" if args.with_sources else "")
        )
    return 0
