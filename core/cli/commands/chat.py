"""`elora chat`: an interactive terminal conversation (/trace, /new, /quit)."""

from __future__ import annotations

NAME = "chat"
HELP = "chat with Elora in the terminal (/trace shows the last pack and routing)"

HELP_TEXT = "commands: /trace (last evidence pack and routing), /new (fresh window), /quit"


def configure(parser) -> None:
    parser.add_argument("--chat", dest="chat_id", default="cli", help="conversation id")


def run(args) -> int:
    import asyncio

    from core.cli.context import services

    svc = services()
    try:
        asyncio.run(_session(svc, args.chat_id))
    finally:
        svc.close()
    return 0


async def _session(svc, chat_id: str) -> None:
    try:
        await _loop(svc, chat_id)
    finally:
        from core import app

        await app.drain(svc)  # the last messages' vectors


async def _loop(svc, chat_id: str) -> None:
    import json

    from core import app

    print(f"Elora — chat {chat_id}. {HELP_TEXT}")
    last = None
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            print()
            return
        if not text:
            continue
        if text in ("/quit", "/exit"):
            return
        if text == "/help":
            print(HELP_TEXT)
            continue
        if text == "/new":
            app.new_conversation(svc, "cli", chat_id, "operator")
            print("(new conversation)")
            continue
        if text == "/trace":
            if last is None:
                print("(nothing yet)")
                continue
            print(app.render_pack_text(last.pack.to_json()))
            summary = {k: v for k, v in last.summary().items() if k != "text"}
            print(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
            continue
        request = app.Request(surface="cli", chat_id=chat_id, text=text, user_id="operator",
                          sender="operator")  # fmt: skip
        last = await app.answer(svc, request)
        print(f"elora> {last.text}", flush=True)
        await app.after_reply(svc, last)  # learning and the trace, once the answer is shown
