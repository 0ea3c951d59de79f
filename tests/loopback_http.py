"""The HTTP server under the test fakes (Bot API, model provider): 127.0.0.1, one thread per
connection, and connections kept alive between requests as real providers keep them.

A client talking to Telegram or a model provider reuses its connections (HTTP/1.1 keep-alive);
one connection per request would charge the bot for a TCP set-up and tear-down on every call
it makes, which it never pays in production. `stop()` closes the connections still open, so a
stopped fake refuses the next request as a stopped server would.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class KeepAliveHandler(BaseHTTPRequestHandler):
    """A request handler speaking HTTP/1.1 (every response must carry its Content-Length)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle on, a kept-alive connection would wait
    # for the client's delayed ACK (40 ms) before sending the body.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # keep test output quiet
        pass


class LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server on a free loopback port that knows its open connections."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), handler)

    def process_request(self, request, client_address):
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def serve(self, poll_interval: float = 0.5) -> LoopbackServer:
        """Serve in a background thread."""
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop accepting, close every open connection, release the port."""
        self.shutdown()
        with self._open_lock:
            still_open = list(self._open)
        for request in still_open:
            with contextlib.suppress(OSError):  # already closed by its client
                request.shutdown(socket.SHUT_RDWR)
        self.server_close()
