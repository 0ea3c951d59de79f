"""Importers of chat histories exported elsewhere (Telegram Desktop, ChatGPT) into the archive."""
