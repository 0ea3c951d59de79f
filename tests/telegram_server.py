"""A fake Telegram Bot API server on 127.0.0.1 for tests.

It speaks the real HTTP API that python-telegram-bot uses (getMe, getUpdates with offsets and
long polling, one poller at a time, sendMessage, editMessageText, editMessageReplyMarkup, sendChatAction,
answerCallbackQuery, setMyCommands, deleteWebhook, getFile and file downloads), records every
call and every message it returned, and can fail a method with an HTTP status (and the error
description Telegram would give) a given number of times.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import defaultdict
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs, unquote

from tests.loopback_http import KeepAliveHandler, LoopbackServer

BOT_ID = 777000111
MAX_POLL_WAIT = 1.0
DESCRIPTIONS = {400: "Bad Request", 403: "Forbidden", 429: "Too Many Requests", 502: "Bad Gateway"}


def _decode(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


class FakeTelegram:
    """Queue updates with push(); read what the bot sent in calls / sent_messages()."""

    def __init__(self, token: str):
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.files: dict[str, bytes] = {}
        self.failures: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self.returned: list[dict[str, Any]] = []  # messages sent or edited, as the API returned
        self.chat_types: dict[int, str] = {}
        self.hooks: dict[str, Any] = {}
        self.cond = threading.Condition()
        self.next_update_id = 1000
        self.next_message_id = 5000
        self.confirmed_offset = 0
        self.poll_generation = 0  # the latest getUpdates call; an older waiting one ends (409)
        self.conflicts = 0  # getUpdates calls ended by a newer one (two pollers, or a restart)
        self._server: LoopbackServer | None = None

    # -- scripting -------------------------------------------------------------------------

    def push(self, update: dict[str, Any]) -> int:
        """Queue an update (update_id assigned if missing); return its id."""
        with self.cond:
            if "update_id" not in update:
                update = {"update_id": self.next_update_id, **update}
                self.next_update_id += 1
            for value in update.values():
                chat = value.get("chat") if isinstance(value, dict) else None
                if chat:
                    self.chat_types[int(chat["id"])] = chat.get("type", "private")
            self.updates.append(update)
            self.cond.notify_all()
            return update["update_id"]

    def fail(
        self, method: str, status: int = 502, times: int = 1, description: str | None = None
    ) -> None:
        """Answer the next `times` calls of `method` with an HTTP error (and its description,
        e.g. "Bad Request: can't parse entities: ...")."""
        text = description or DESCRIPTIONS.get(status, "Error")
        with self.cond:
            self.failures[method].extend([(status, text)] * times)

    def on(self, method: str, hook) -> None:
        """Call hook(params) when `method` arrives, before answering it (to observe the
        world at that moment)."""
        self.hooks[method] = hook

    def add_file(self, file_id: str, data: bytes) -> None:
        """Make a file downloadable through getFile."""
        self.files[file_id] = data

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """Parameters of every call to a method, in order."""
        with self.cond:
            return [params for name, params in self.calls if name == method]

    def sent_messages(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Every sendMessage call (optionally for one chat)."""
        return [
            p
            for p in self.calls_to("sendMessage")
            if chat_id is None or int(p["chat_id"]) == chat_id
        ]

    def messages(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Messages sendMessage returned (with their message_id), optionally for one chat."""
        with self.cond:
            return [m for m in self.returned if chat_id is None or m["chat"]["id"] == chat_id]

    def wait_for(self, predicate, timeout: float = 120.0) -> bool:
        """Block until predicate() is true (re-checked on every API call) or the timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.cond.wait(remaining)
        return True

    # -- serving ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """Value for ELORA_TELEGRAM_BASE_URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeTelegram:
        """Serve on a free loopback port in a background thread."""
        fake = self

        class Handler(KeepAliveHandler):
            def do_GET(self):
                prefix = f"/file/bot{fake.token}/"
                path = unquote(self.path)  # PTB percent-encodes file URLs (the token's ':')
                if path.startswith(prefix):
                    data = fake.files.get(path[len(prefix) :].split("/", 1)[-1])
                    if data is None:
                        return self._json(
                            404, {"ok": False, "error_code": 404, "description": "Not Found"}
                        )
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self._api()

            def do_POST(self):
                self._api()

            def _params(self) -> dict[str, Any]:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type", "")
                if "json" in kind:
                    return json.loads(body or b"{}")
                if "multipart" in kind:
                    message = BytesParser(policy=HTTP).parsebytes(
                        b"Content-Type: " + kind.encode() + b"\r\n\r\n" + body
                    )
                    return {
                        part.get_param("name", header="content-disposition"): _decode(
                            part.get_content() if part.get_content_maintype() == "text" else ""
                        )
                        for part in message.iter_parts()
                    }
                return {k: _decode(v[0]) for k, v in parse_qs(body.decode()).items()}

            def _api(self):
                prefix = f"/bot{fake.token}/"
                path = unquote(self.path)
                if not path.startswith(prefix):
                    return self._json(
                        401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
                    )
                method = path[len(prefix) :].split("?")[0]
                params = self._params()
                status, payload = fake._answer(method, params)
                self._json(status, payload)

            def _json(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The bot may have stopped waiting (a long poll cut short at shutdown).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        # A short poll interval: stop() waits for it, once per test.
        self._server = LoopbackServer(Handler).serve(poll_interval=0.05)
        return self

    def stop(self) -> None:
        """Shut down."""
        if self._server is not None:
            self._server.stop()

    def _answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method in self.hooks:
            self.hooks[method](params)
        with self.cond:
            if self.failures.get(method):
                status, description = self.failures[method].pop(0)
                self.calls.append((f"{method}!{status}", params))
                self.cond.notify_all()
                return status, {"ok": False, "error_code": status, "description": description}
        if method == "getUpdates":
            result = self._get_updates(params)
            if result is None:  # Telegram serves one poller per bot: a newer call ended this one
                return 409, {"ok": False, "error_code": 409, "description":
                             "Conflict: terminated by other getUpdates request"}  # fmt: skip
            return 200, {"ok": True, "result": result}
        with self.cond:
            self.calls.append((method, params))
            result = self._result(method, params)
            self.cond.notify_all()
        return 200, {"ok": True, "result": result}

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The updates from the offset on (waiting a little for some); None when a newer
        getUpdates call arrived meanwhile and ended this one, as Telegram does."""
        offset = int(params.get("offset") or 0)
        wait = min(float(params.get("timeout") or 0), MAX_POLL_WAIT)
        deadline = time.monotonic() + wait
        with self.cond:
            self.poll_generation += 1
            mine = self.poll_generation
            self.cond.notify_all()
            if offset:
                self.confirmed_offset = max(self.confirmed_offset, offset)
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and time.monotonic() < deadline:
                if self.poll_generation != mine:
                    self.conflicts += 1
                    self.calls.append(("getUpdates!409", params))
                    return None
                self.cond.wait(deadline - time.monotonic())
            self.calls.append(("getUpdates", params))
            self.cond.notify_all()
            return list(self.updates)

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        now = int(time.time())
        if method == "getMe":
            return {"id": BOT_ID, "is_bot": True, "first_name": "Elora", "username": "elora_test_bot",
                    "can_join_groups": True, "can_read_all_group_messages": False,
                    "supports_inline_queries": False}  # fmt: skip
        if method in ("sendMessage", "editMessageText"):
            if method == "sendMessage":
                self.next_message_id += 1
            chat_id = int(params["chat_id"]) if "chat_id" in params else 0
            message = {"message_id": int(params.get("message_id") or self.next_message_id),
                       "date": now, "text": str(params.get("text", "")),
                       "chat": {"id": chat_id, "type": self.chat_types.get(chat_id, "private")},
                       "from": {"id": BOT_ID, "is_bot": True, "first_name": "Elora"}}  # fmt: skip
            if params.get("reply_markup"):
                message["reply_markup"] = params["reply_markup"]
            if method == "sendMessage":
                self.returned.append(message)
            return message
        if method == "getFile":
            file_id = params["file_id"]
            return {"file_id": file_id, "file_unique_id": f"u{file_id}",
                    "file_size": len(self.files.get(file_id, b"")), "file_path": f"documents/{file_id}"}  # fmt: skip
        if method == "editMessageReplyMarkup":
            return True
        return True
