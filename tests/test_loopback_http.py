"""The fakes' HTTP server keeps connections alive as real providers do, and a stopped fake
refuses the next request on a connection it had kept open."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from tests.llm_server import FakeLLMServer


def _ask(conn: http.client.HTTPConnection, path: str, text: str) -> dict:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]})
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    return json.loads(response.read())


def test_requests_share_one_connection_until_the_fake_stops():
    server = FakeLLMServer().start()
    server.enqueue("m", "first", "second")
    url = urlparse(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        assert (
            _ask(conn, url.path + "/chat/completions", "a")["choices"][0]["message"]["content"]
            == "first"
        )
        socket_used = conn.sock
        second = _ask(conn, url.path + "/chat/completions", "b")
        assert second["choices"][0]["message"]["content"] == "second"
        assert conn.sock is socket_used  # the same TCP connection served both

        server.stop()
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            _ask(conn, url.path + "/chat/completions", "c")
    finally:
        conn.close()
    assert len(server.requests) == 2
