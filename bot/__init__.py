"""The Telegram surface (python-telegram-bot v22): a thin layer over core's pipeline."""
