"""`elora ask "TEXT"`: one question through the full pipeline."""

from __future__ import annotations

NAME = "ask"
HELP = "ask one question (capture, recall, answer, trace); --json adds the trace"


def configure(parser) -> None:
    parser.add_argument("text", help="your message")
    parser.add_argument("--chat", dest="chat_id", default="cli", help="conversation id")
    parser.add_argument("--json", action="store_true", help="print the answer and its trace")


def run(args) -> int:
    import asyncio

    from core.cli.context import print_json, services
    from core.pipeline import Request

    svc = services()
    try:
        request = Request(surface="cli", chat_id=args.chat_id, text=args.text,
                          user_id="operator", sender="operator")  # fmt: skip
        reply = asyncio.run(svc.assistant.handle(request))
    finally:
        svc.close()
    if args.json:
        print_json(reply.summary())
    else:
        print(reply.text)
    return 0 if reply.status == "answered" else 1
