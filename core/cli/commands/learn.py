"""`elora learn`: turn archived history (e.g. an import) into proposals."""

from __future__ import annotations

NAME = "learn"
HELP = "run learning extraction over archived messages (resumable), creating proposals"


def configure(parser) -> None:
    parser.add_argument("--chat", dest="chat_id", help="only this chat id")
    parser.add_argument("--since", help="only messages since this date (YYYY-MM-DD)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    import asyncio
    from datetime import datetime

    from core import app
    from core.cli.context import print_json, services
    from core.cli.progress import progress_bar
    from core.errors import InvalidInput

    try:
        since = datetime.fromisoformat(args.since) if args.since else None
    except ValueError:
        raise InvalidInput(f"--since: expected YYYY-MM-DD, got {args.since!r}") from None
    svc = services()
    try:
        total = app.count_unlearned(svc, args.chat_id, since)
        with progress_bar("learning", total, unit="msgs") as advance:
            outcome = asyncio.run(app.learn(svc, args.chat_id, since, on_progress=advance))
        if outcome["extractor"] == "model":  # the same model indexes facts of the archive
            outcome["fact_keys"] = asyncio.run(app.index_facts(svc))
    finally:
        svc.close()
    if args.json:
        print_json(outcome)
    else:
        print(
            f"read {outcome['messages']} messages ({outcome['extractor']} extractor): "
            f"{outcome['proposals']} proposal(s), {outcome['blocked']} blocked by consent rules"
            + (f", {outcome['failures']} failure(s)" if outcome["failures"] else "")
        )
        if "fact_keys" in outcome:
            keys = outcome["fact_keys"]
            print(
                f"indexed {keys['facts']} fact(s) from {keys['messages']} archived messages"
                + (f" ({keys['failure']})" if keys["failure"] else "")
            )
    return 0
