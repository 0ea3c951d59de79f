"""`elora bot`: run the Telegram bot (long polling; webhook when configured)."""

from __future__ import annotations

import sys

NAME = "bot"
HELP = "run the Telegram bot (needs TELEGRAM_BOT_TOKEN and ELORA_TELEGRAM_ALLOWED_USERS)"


def configure(parser) -> None:
    pass


def run(args) -> int:
    from core.cli.context import services

    svc = services()
    settings = svc.settings
    if settings.telegram_bot_token is None or not settings.telegram_bot_token.get_secret_value():
        print(
            "elora: TELEGRAM_BOT_TOKEN is not set (create a bot with @BotFather)", file=sys.stderr
        )
        svc.close()
        return 2
    if not settings.allowed_user_ids():
        print(
            "elora: ELORA_TELEGRAM_ALLOWED_USERS is empty: nobody would be served "
            "(set your numeric Telegram user id)",
            file=sys.stderr,
        )
        svc.close()
        return 2
    from bot.app import run as run_bot

    run_bot(svc)
    return 0
