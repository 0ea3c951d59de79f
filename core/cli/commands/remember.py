"""`elora remember TEXT`: an explicit save by the operator (approved by definition)."""

from __future__ import annotations

NAME = "remember"
HELP = "save a memory now (an explicit operator save, no review needed)"


def configure(parser) -> None:
    from core.memory.vocabulary import KINDS, MEMORY_TIERS

    parser.add_argument("text", help="what to remember")
    parser.add_argument("--kind", choices=KINDS, default="fact")
    parser.add_argument("--tier", choices=MEMORY_TIERS, help="default: from the kind")
    parser.add_argument("--importance", type=int, choices=range(1, 6), default=1, metavar="1-5")
    parser.add_argument("--topic", action="append", dest="topics", help="topic tag (repeatable)")
    parser.add_argument("--scope", default="global", help="global, user:ID, chat:ID, project:NAME")
    parser.add_argument(
        "--id", dest="memory_id", help="memory_id slug (saving it again updates it)"
    )
    parser.add_argument("--json", action="store_true", help="print the saved entry as JSON")


def embeds(args) -> bool:
    """The new entry is embedded (core.cli.main loads the model early)."""
    return True


def run(args) -> int:
    from core import app
    from core.cli.commands.undo import hint
    from core.cli.context import print_json, services

    svc = services()
    try:
        with app.acting("cli") as who:
            kept = app.remember(
                svc,
                args.text,
                kind=args.kind,
                tier=args.tier,
                importance=args.importance,
                topics=args.topics,
                scope=args.scope,
                memory_id=args.memory_id,
            )
    finally:
        svc.close()
    entry = kept.entry
    if args.json:
        print_json({**app.entry_json(entry), "confirmed": kept.confirmed,
                    "action_id": who.last_action})  # fmt: skip
    elif kept.confirmed:
        print(f"already remembered — confirmed {entry.memory_id} "
              f"(said {entry.observations} times){hint(who)}")  # fmt: skip
    else:
        print(f"remembered {entry.memory_id} ({entry.tier}/{entry.kind}, "
              f"importance {entry.importance}){hint(who)}")  # fmt: skip
    return 0
