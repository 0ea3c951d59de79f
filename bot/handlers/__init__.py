"""Telegram handlers, one module per topic; bot/app.py registers them in order."""
