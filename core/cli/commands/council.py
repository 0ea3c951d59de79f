"""`elora council "QUESTION" --skills a,b,c`: convene the round table."""

from __future__ import annotations

NAME = "council"
HELP = "ask a council of 2-5 expert skills (Delphi rounds, then a synthesis)"


def configure(parser) -> None:
    parser.add_argument("question")
    parser.add_argument("--skills", required=True, help="comma-separated skill ids (2 to 5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3, max 5)")
    parser.add_argument("--chat", dest="chat_id", help="chat whose conversation to distil")
    parser.add_argument("--json", action="store_true", help="print the full transcript")


def run(args) -> int:
    import asyncio
    import sys

    from core import app
    from core.cli.context import print_json, services

    svc = services()

    async def progress(number, record):
        if not args.json:
            failed = ", ".join(f["participant"] for f in record["failures"])
            print(f"round {number}: {len(record['contributions'])} contribution(s)"
                  + (f", failed: {failed}" if failed else ""), file=sys.stderr)  # fmt: skip

    try:
        transcript = asyncio.run(
            app.council(
                svc,
                args.question,
                args.skills,
                args.rounds,
                chat_id=args.chat_id,
                on_round=progress,
            )
        )
    finally:
        svc.close()
    if args.json:
        print_json(transcript)
    else:
        for note in transcript["notes"]:
            print(f"note: {note}", file=sys.stderr)
        print(transcript["synthesis"]["text"])
    return 0
