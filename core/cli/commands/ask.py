"""`elora ask "TEXT"`: one question through the full pipeline."""

from __future__ import annotations

import sys

NAME = "ask"
HELP = "ask one question (capture, recall, answer, trace); --json adds the trace"


def configure(parser) -> None:
    parser.add_argument("text", help="your message")
    parser.add_argument(
        "--chat",
        dest="chat_id",
        help="continue this conversation (default: a new one for each question; --json "
        "prints its id)",
    )
    parser.add_argument("--file", help="a text, Markdown or PDF file to ask about")
    parser.add_argument("--json", action="store_true", help="print the answer and its trace")


def run(args) -> int:
    import asyncio

    from core import app
    from core.cli.context import print_json, services

    # One-shot: a fresh conversation each time (no window carried over from earlier asks),
    # unless the operator names one to continue.
    args.chat_id = args.chat_id or app.fresh_chat_id("ask")
    svc = services()
    try:
        reply = asyncio.run(_ask(svc, args))
    finally:
        svc.close()
    if args.json:  # the trace is whole once the exchange is learned
        print_json({**reply.summary(), "chat_id": args.chat_id})
    if reply.spooled:
        print(
            "elora: the database is busy; this exchange waits in the spool and is saved "
            "as soon as the database takes writes again",
            file=sys.stderr,
        )
    return 0 if reply.status == "answered" else 1


async def _ask(svc, args):
    from pathlib import Path

    from core import app
    from core.errors import InvalidInput

    extra = None
    if args.file:
        path = Path(args.file)
        limit = svc.settings.max_document_bytes
        try:
            if path.stat().st_size > limit:  # refused before reading it into memory
                raise InvalidInput(
                    f"{path.name} is {path.stat().st_size / 1e6:.1f} MB; "
                    f"the limit is {limit / 1e6:.0f} MB"
                )
            data = path.read_bytes()
        except OSError as exc:
            raise InvalidInput(f"{path}: {exc.strerror}") from None
        register = await app.add_document(
            svc, surface="cli", chat_id=args.chat_id, user_id="operator", name=path.name, data=data
        )
        extra = register.render()
    request = app.Request(surface="cli", chat_id=args.chat_id, text=args.text, user_id="operator",
                      sender="operator", extra_context=extra)  # fmt: skip
    reply = await app.answer(svc, request)
    if not args.json:  # the answer is shown, then learned from (SPEC: after the reply)
        print(reply.text, flush=True)
    reply = await app.after_reply(svc, reply)
    await app.drain(svc)
    return reply
