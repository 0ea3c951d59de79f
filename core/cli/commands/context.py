"""`elora context "QUESTION"`: print the evidence pack a request would get."""

from __future__ import annotations

NAME = "context"
HELP = "show the evidence pack (L0-L3) for a question; --json prints the documented contract"


def configure(parser) -> None:
    parser.add_argument("question")
    parser.add_argument("--chat", dest="chat_id", help="chat id whose scope applies")
    parser.add_argument("--user", dest="user_id", help="user id whose scope applies")
    parser.add_argument("--budget", type=int, help="token budget of the whole pack")
    parser.add_argument("--json", action="store_true", help="print the pack as JSON")


def embeds(args) -> bool:
    """The question is embedded (core.cli.main loads the model early)."""
    return True


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services

    svc = services()
    try:
        pack = app.context(
            svc, args.question, chat_id=args.chat_id, user_id=args.user_id, budget=args.budget
        )
    finally:
        svc.close()
    if args.json:
        print_json(pack.to_json())
    else:
        print(app.render_pack_text(pack.to_json()))
    return 0
