"""A local OpenAI-compatible HTTP server for tests: scripted replies, tool calls, errors, delays.

LiteLLM reaches it through its normal `openai/<model>` provider with an api_base, so the whole
HTTP path is real; only the model is scripted. Each model name has its own reply queue and
request log; standing answers can also be picked by what the latest user message contains.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.loopback_http import KeepAliveHandler, LoopbackServer

# The model names the suites configure as each tier.
MODELS = {"LITE": "fake-lite", "FLASH": "fake-flash", "PRO": "fake-pro"}
# How long a held standing answer may wait for its release.
WAIT = 120.0  # a timeout for states on a loaded 2-core machine, never a speed target


def model_env(
    base_url: str,
    models: dict[str, str] = MODELS,
    extractor: str | None = "heuristic",
    key: str = "test-key",
) -> dict[str, str]:
    """The ELORA_* variables pointing every given tier at the fake server (`openai/<name>`).

    The heuristic learning extractor is the default: learning after each exchange would add a
    LITE extraction call, which only the learning tests want (they pass extractor=None)."""
    env = {f"ELORA_MODEL_{tier}": f"openai/{name}" for tier, name in models.items()}
    env.update({"ELORA_LLM_API_BASE": base_url, "ELORA_LLM_API_KEY": key, "ELORA_LLM_RETRIES": "0"})
    if extractor is not None:
        env["ELORA_LEARNING_EXTRACTOR"] = extractor
    return env


def last_user_text(request: dict[str, Any]) -> str:
    """The last user message of a model request (the message being answered)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


@dataclass
class Reply:
    """One scripted answer: text, tool calls, an HTTP error status, and/or a delay."""

    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0
    prompt_tokens: int = 50
    completion_tokens: int = 10


def tool(name: str, /, **arguments: Any) -> dict[str, Any]:
    """A tool call for a scripted reply."""
    return {"name": name, "arguments": arguments}


class FakeLLMServer:
    """Serve /v1/chat/completions on 127.0.0.1 from per-model queues; log every request.

    Standing answers (`answer_when`) come first: they are chosen by what the latest user message
    contains (the classifier's prompt, one chat's question, the council's synthesis...), so
    concurrent requests get the right reply whatever order they arrive in. A standing answer can
    be held until the test releases it."""

    def __init__(self):
        self.queues: dict[str, deque[Reply]] = defaultdict(deque)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.default_text = "ok"
        # Picks a reply from the request body when the model's queue is empty (None: default
        # text), so concurrent requests can be answered by what they contain, not by arrival.
        self.responder: Callable[[dict[str, Any]], Reply | str | None] | None = None
        self.standing: dict[str, tuple[Reply, threading.Event | None, threading.Event | None]] = {}
        self.active = 0
        self.max_active = 0
        self._server: LoopbackServer | None = None

    # -- scripting -------------------------------------------------------------------------

    def enqueue(self, model: str, *replies: Reply | str) -> None:
        """Queue replies for a model (bare strings are text replies)."""
        with self.lock:
            for reply in replies:
                self.queues[model].append(Reply(text=reply) if isinstance(reply, str) else reply)

    def answer_when(
        self,
        marker: str,
        reply: Reply | str,
        hold: threading.Event | None = None,
        arrived: threading.Event | None = None,
    ) -> None:
        """Answer requests whose latest user message contains `marker` with `reply` (after
        `hold` is set, when given); `arrived` is set as soon as such a request comes in."""
        with self.lock:
            reply = Reply(text=reply) if isinstance(reply, str) else reply
            self.standing[marker] = (reply, hold, arrived)

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        """Request bodies received for a model, in order."""
        with self.lock:
            return [r for r in self.requests if r.get("model") == model]

    def reset(self) -> None:
        """Forget queues, standing answers and logs between tests (one server serves the run)."""
        with self.lock:
            self.queues.clear()
            self.requests.clear()
            self.max_active = 0
            self.responder = None
            self.standing = {}
            self.default_text = "ok"

    # -- serving ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The api_base to hand to LiteLLM."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLMServer:
        """Listen on a free loopback port in a background thread."""
        server = self

        class Handler(KeepAliveHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    return self._send(200, server._embeddings(body))
                status, payload, delay = server._complete(body)
                with server.lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    if delay:
                        time.sleep(delay)  # a slow provider, on the server side
                finally:
                    with server.lock:
                        server.active -= 1
                self._send(status, payload)

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The client may have given up (timeout): nothing left to tell it then.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self._server = LoopbackServer(Handler).serve()
        return self

    def stop(self) -> None:
        """Shut the server down."""
        if self._server is not None:
            self._server.stop()

    def _complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        text = last_user_text(body)
        with self.lock:
            found = next((v for m, v in self.standing.items() if m in text), None)
            if found is None:
                routed = body
            else:  # a private queue for this one request, so concurrent requests can't take it
                routed = {**body, "model": f"standing-{uuid.uuid4().hex}"}
                self.queues[routed["model"]].append(found[0])
        if found is not None and found[2] is not None:
            found[2].set()
        if found is not None and found[1] is not None:
            assert found[1].wait(WAIT), "a held model reply was never released"
        status, payload, delay = self._reply(routed)
        if routed is not body:
            with self.lock:
                self.queues.pop(routed["model"], None)
                self.requests = [body if r is routed else r for r in self.requests]
            payload["model"] = body.get("model", "")
        return status, payload, delay

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        model = body.get("model", "")
        with self.lock:
            self.requests.append(body)
            queue = self.queues.get(model)
            reply = queue.popleft() if queue else None
            responder = self.responder
        if reply is None and responder is not None:
            picked = responder(body)
            reply = Reply(text=picked) if isinstance(picked, str) else picked
        if reply is None:
            reply = Reply(text=self.default_text)
        if reply.status != 200:
            error = {"error": {"message": f"scripted {reply.status}", "type": "scripted"}}
            return reply.status, error, reply.delay
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:8]}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in reply.tool_calls
            ]
        payload = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
        return 200, payload, reply.delay

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input") or []
        inputs = [inputs] if isinstance(inputs, str) else inputs
        data = []
        for i, text in enumerate(inputs):
            vector = [0.0] * 16
            for word in str(text).lower().split():
                vector[hash(word) % 16] += 1.0
            data.append({"object": "embedding", "index": i, "embedding": vector})
        return {"object": "list", "data": data, "model": body.get("model"), "usage": {}}
