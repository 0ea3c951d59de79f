"""The Telegram surface (python-telegram-bot v22): a thin layer over the core's front door
(core.app)."""
