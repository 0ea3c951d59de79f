"""Logging to stderr with every configured secret redacted (tokens appear in library URLs), and
the one redactor that logs and traces share."""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

# Telegram bot tokens look like 123456789:AA...; they show up in httpx request lines.
_BOT_TOKEN = re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{30,}\b")


class Redactor:
    """The one redactor: configured secrets, and anything shaped like a Telegram bot token,
    replaced in text and in data (strings inside lists and dicts, deeply). Logs and traces
    both use it."""

    def __init__(self, secrets: list[str]):
        # Very short values would blank ordinary words ("none" is a local server's key);
        # real keys and tokens are long.
        self.secrets = [s for s in secrets if s and len(s) >= 8]

    def text(self, text: str) -> str:
        """The text with secrets and anything shaped like a bot token replaced."""
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return _BOT_TOKEN.sub("[redacted-token]", text)

    def value(self, value: Any) -> Any:
        """`value` with every string in it redacted (lists and dicts, deeply)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value


class RedactSecrets(logging.Filter):
    """Replace secrets in every record (message and arguments) before any handler writes it."""

    def __init__(self, secrets: list[str]):
        super().__init__()
        self.redactor = Redactor(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        record.msg, record.args = self.redactor.text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        return True


def setup_logging(level: str, secrets: list[str]) -> None:
    """Log to stderr at `level`; quiet chatty HTTP libraries; redact secrets everywhere."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_elora", False):
            root.removeHandler(old)
    handler._elora = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(getattr(logging, level, logging.WARNING))
    for noisy in ("httpx", "httpcore", "LiteLLM", "litellm", "chromadb", "apscheduler"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
