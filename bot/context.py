"""A typed context: handlers reach the services and the user's language without casts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from telegram import Update
from telegram.ext import Application, CallbackContext, ExtBot

from bot.i18n import language_of, text

if TYPE_CHECKING:
    from core.services import Services


class EloraContext(CallbackContext[ExtBot, dict, dict, dict]):
    """CallbackContext with `services` and `say(update, key)` for localised texts."""

    def __init__(
        self, application: Application, chat_id: int | None = None, user_id: int | None = None
    ):
        super().__init__(application=application, chat_id=chat_id, user_id=user_id)

    @property
    def services(self) -> Services:
        """The services the application was built with."""
        return self.application.bot_data["services"]

    def lang(self, update: Update) -> str:
        """fr or en for this update's user (or the configured override)."""
        user = update.effective_user
        setting = self.services.settings.telegram_language
        return language_of(user.language_code if user else None, setting)

    def say(self, update: Update, key: str, **values) -> str:
        """A localised bot text."""
        return text(self.lang(update), key, **values)
