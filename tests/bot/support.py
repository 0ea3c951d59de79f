"""The bot under test: the real Application polling FakeTelegram, answering through the real
pipeline against the shared fake OpenAI-compatible server (its classifier answer standing)."""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any

from telegram import Update

from core.storage.db import run
from tests.bot import updates
from tests.llm_server import FakeLLMServer, last_user_text
from tests.telegram_server import FakeTelegram

TOKEN = "123456789:AAFakeTokenForTests_abcdefghijklmnopq"
LLM_KEY = "test-key-123456"
CLASSIFIER_MARK = "You classify one message sent to a personal assistant"
# What the LITE classifier says about every message: a plain low-complexity task.
VERDICT = json.dumps(
    {"intent": "task", "complexity": "low", "memory_need": "L2", "tiers": ["semantic"],
     "confidence": 0.9}
)  # fmt: skip
WAIT = 120.0  # a timeout for states on a loaded 2-core machine, never a speed target


def answers(llm: FakeLLMServer) -> list[dict[str, Any]]:
    """Requests that asked for an answer (not the classifier's), in order."""
    with llm.lock:
        return [r for r in llm.requests if CLASSIFIER_MARK not in last_user_text(r)]


class BotRunner:
    """Start/stop the real Application like run_polling does, and wait on what it sends."""

    def __init__(self, telegram: FakeTelegram, services, request=None):
        self.telegram = telegram
        self.services = services
        self.request = request  # the bot's HTTP request object (PTB's default when None)
        self.app = None

    async def start(self) -> BotRunner:
        from bot.app import build_application

        self.app = build_application(self.services, request=self.request, scheduler=False)
        await self.app.initialize()
        await self.app.post_init(self.app)  # run_polling's order: initialize, post_init, start
        await self.app.start()
        await self.app.updater.start_polling(
            poll_interval=0, timeout=1, allowed_updates=Update.ALL_TYPES
        )
        return self

    async def stop(self) -> None:
        if self.app is None:
            return
        if self.app.updater.running:
            await self.app.updater.stop()
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()
        self.app = None

    def push(self, update: dict[str, Any]) -> int:
        """Queue an update for the bot to fetch; return its update_id."""
        return self.telegram.push(update)

    async def until(self, predicate, what: str, timeout: float = WAIT) -> None:
        """Wait (off the event loop) until predicate() holds after some API call."""
        ok = await asyncio.to_thread(self.telegram.wait_for, predicate, timeout)
        assert ok, f"timed out waiting for {what}; calls: {[c for c, _ in self.telegram.calls]}"

    async def replies(self, chat_id: int, count: int = 1) -> list[dict[str, Any]]:
        """Wait until `count` messages were sent to a chat; return them (as Telegram returned)."""
        await self.until(
            lambda: len(self.telegram.messages(chat_id)) >= count,
            f"{count} message(s) to chat {chat_id}",
        )
        return self.telegram.messages(chat_id)

    async def say(self, text: str, person: dict = updates.OPERATOR, chat: dict | None = None):
        """Send a text message and return the first new message the bot sends to that chat."""
        chat_id = (chat or updates.private_chat(person))["id"]
        before = len(self.telegram.messages(chat_id))
        self.push(updates.message(text, person, chat))
        return (await self.replies(chat_id, before + 1))[before]

    async def press(
        self, sent: dict[str, Any], data: str, then: str = "editMessageText",
        person: dict = updates.OPERATOR,
    ) -> dict[str, Any]:  # fmt: skip
        """Press an inline button of a sent message; wait for and return the bot's next
        call of `then` (the edit that answers the press)."""
        before = len(self.telegram.calls_to(then))
        self.push(updates.callback(sent, data, person))
        await self.until(lambda: len(self.telegram.calls_to(then)) > before, f"{then} after {data}")
        return self.telegram.calls_to(then)[before]

    async def settle(self, chat: dict | None = None, person: dict = updates.OPERATOR) -> None:
        """Send /help in a chat and wait for the help text: one chat's updates are handled in
        order, so everything pushed to that chat before has been handled."""
        chat_id = (chat or updates.private_chat(person))["id"]
        before = len(self.telegram.messages(chat_id))
        self.push(updates.message("/help", person, chat))
        await self.until(
            lambda: any("/council" in m["text"] for m in self.telegram.messages(chat_id)[before:]),
            f"the help text in chat {chat_id}",
        )


def scalar(services, sql: str, *params) -> Any:
    """One value from the database."""
    with services.db.session() as session:
        return run(session.connection(), sql, params).scalar_one()


def rows(services, sql: str, *params) -> list[tuple]:
    """Rows from the database."""
    with services.db.session() as session:
        return list(run(session.connection(), sql, params).all())


TELEGRAM_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
                 "blockquote", "tg-spoiler", "span"}  # fmt: skip
_HTML_TOKEN = re.compile(
    r"<(/?)([a-zA-Z-]+)((?:\s+[a-z-]+=\"[^\"<>]*\")*)\s*>"
    r"|&(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);"
    r"|([<>&])"
)


def telegram_html(text: str) -> str:
    """Check text the way Telegram's HTML parse mode does (known tags only, properly nested,
    every other <, > and & escaped) and return what the user would read."""
    shown, stack, pos = [], [], 0
    for m in _HTML_TOKEN.finditer(text):
        shown.append(text[pos : m.start()])
        pos = m.end()
        closing, name, raw = m.group(1), m.group(2), m.group(4)
        if raw is not None:
            raise AssertionError(f"unescaped {raw!r} at {m.start()} in {text!r}")
        if name is None:
            shown.append(html.unescape(m.group(0)))
            continue
        name = name.lower()
        if name not in TELEGRAM_TAGS:
            raise AssertionError(f"tag <{name}> is not Telegram HTML: {text!r}")
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            raise AssertionError(f"</{name}> closes nothing open at {m.start()} in {text!r}")
    if stack:
        raise AssertionError(f"unclosed {stack} in {text!r}")
    shown.append(text[pos:])
    return "".join(shown)
