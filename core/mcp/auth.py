"""Who may reach `elora mcp --http`: a static bearer token on every request, loopback binds
unless the operator explicitly allows others."""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

Scope = dict[str, Any]


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name could resolve anywhere


class BearerToken:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get a 401."""

    def __init__(self, app, token: str):
        if not token:
            raise ValueError("an empty token would let anyone in")
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] == "websocket":  # none is served; closing before accept is a 403
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and not self._authorised(scope):
            await _unauthorised(send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        header = next((v for k, v in scope.get("headers", []) if k == b"authorization"), b"")
        kind, _, given = header.partition(b" ")
        # compare_digest: the time taken says nothing about how much of the token was right.
        return kind.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)


async def _unauthorised(send) -> None:
    body = json.dumps({"error": "missing or wrong bearer token (see ELORA_MCP_TOKEN)"}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="elora"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
