"""The bot under test: the real Application polling FakeTelegram, answering through the real
pipeline against a scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
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


def _prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(parts)


class ScriptedLLM(FakeLLMServer):
    """The fake server, plus standing answers for side prompts recognised by a marker (the
    classifier, the council's synthesis...), so queued replies feed only the answers a test is
    about, whatever the heuristics decide to ask the model."""

    def __init__(self):
        super().__init__()
        self.standing: dict[str, Reply] = {}

    def answer_when(self, marker: str, reply: Reply | str) -> None:
        """Answer every request whose prompt contains `marker` with `reply`."""
        with self.lock:
            self.standing[marker] = Reply(text=reply) if isinstance(reply, str) else reply

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.standing = {CLASSIFIER_MARK: Reply(text=VERDICT)}

    def answers(self) -> list[dict[str, Any]]:
        """Requests that asked for an answer (not the classifier's)."""
        with self.lock:
            return [r for r in self.requests if CLASSIFIER_MARK not in _prompt_text(r)]

    def _complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        text = _prompt_text(body)
        with self.lock:
            reply = next((r for m, r in self.standing.items() if m in text), None)
            if reply is None:
                routed = body
            else:  # a private queue for this one request, so concurrent requests can't take it
                routed = {**body, "model": f"standing-{uuid.uuid4().hex}"}
                self.queues[routed["model"]].append(reply)
        status, payload, delay = super()._complete(routed)
        if routed is not body:
            with self.lock:
                self.queues.pop(routed["model"], None)
                self.requests = [body if r is routed else r for r in self.requests]
            payload["model"] = body.get("model", "")
        return status, payload, delay


def last_user_text(request: dict[str, Any]) -> str:
    """The last user message of a model request."""
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")


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

    async def settle(self, chat: dict | None = None, person: dict = updates.OPERATOR) -> None:
        """Send /help in a chat and wait for its answer: one chat's updates are handled in
        order, so everything pushed to that chat before has been handled."""
        await self.say("/help", person, chat)


def scalar(services, sql: str, *params) -> Any:
    """One value from the database."""
    with services.db.session() as session:
        return session.connection().exec_driver_sql(sql, params).scalar_one()


def rows(services, sql: str, *params) -> list[tuple]:
    """Rows from the database."""
    with services.db.session() as session:
        return list(session.connection().exec_driver_sql(sql, params).all())
