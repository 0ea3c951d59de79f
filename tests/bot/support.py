"""The bot under test: the real Application polling FakeTelegram, answering through the real
pipeline against a scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import html
import json
import re
import threading
import uuid
from typing import Any

from telegram import Update

from tests.bot import updates
from tests.llm_server import FakeLLMServer, Reply
from tests.telegram_server import FakeTelegram

TOKEN = "123456789:AAFakeTokenForTests_abcdefghijklmnopq"
LLM_KEY = "test-key-123456"
CLASSIFIER_MARK = "You classify one message sent to a personal assistant"
# What the LITE classifier says about every message: a plain low-complexity task.
VERDICT = json.dumps(
    {"intent": "task", "complexity": "low", "memory_need": "L2", "tiers": ["semantic"],
     "confidence": 0.9}
)  # fmt: skip
WAIT = 30.0


def last_user_text(request: dict[str, Any]) -> str:
    """The last user message of a model request (the message being answered)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


class ScriptedLLM(FakeLLMServer):
    """The fake server, plus standing answers chosen by what the latest user message contains
    (the classifier's prompt, one chat's question, the council's synthesis...), so concurrent
    requests get the right reply whatever order they arrive in. A standing answer can be held
    until the test releases it."""

    def __init__(self):
        super().__init__()
        self.standing: dict[str, tuple[Reply, threading.Event | None]] = {}

    def answer_when(
        self, marker: str, reply: Reply | str, hold: threading.Event | None = None
    ) -> None:
        """Answer requests whose latest user message contains `marker` with `reply` (after
        `hold` is set, when given)."""
        with self.lock:
            self.standing[marker] = (Reply(text=reply) if isinstance(reply, str) else reply, hold)

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.standing = {CLASSIFIER_MARK: (Reply(text=VERDICT), None)}

    def answers(self) -> list[dict[str, Any]]:
        """Requests that asked for an answer (not the classifier's), in order."""
        with self.lock:
            return [r for r in self.requests if CLASSIFIER_MARK not in last_user_text(r)]

    def _complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        text = last_user_text(body)
        with self.lock:
            found = next((v for m, v in self.standing.items() if m in text), None)
            if found is None:
                routed = body
            else:  # a private queue for this one request, so concurrent requests can't take it
                routed = {**body, "model": f"standing-{uuid.uuid4().hex}"}
                self.queues[routed["model"]].append(found[0])
        if found is not None and found[1] is not None:
            assert found[1].wait(WAIT), "a held model reply was never released"
        status, payload, delay = super()._complete(routed)
        if routed is not body:
            with self.lock:
                self.queues.pop(routed["model"], None)
                self.requests = [body if r is routed else r for r in self.requests]
            payload["model"] = body.get("model", "")
        return status, payload, delay


class BotRunner:
    """Start/stop the real Application like run_polling does, and wait on what it sends."""

    def __init__(self, telegram: FakeTelegram, services):
        self.telegram = telegram
        self.services = services
        self.app = None

    async def start(self) -> BotRunner:
        from bot.app import build_application

        self.app = build_application(self.services, scheduler=False)
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
        return session.connection().exec_driver_sql(sql, params).scalar_one()


def rows(services, sql: str, *params) -> list[tuple]:
    """Rows from the database."""
    with services.db.session() as session:
        return list(session.connection().exec_driver_sql(sql, params).all())


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
