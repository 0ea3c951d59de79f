"""`elora mcp`: serve Elora's memory to other agents over the Model Context Protocol."""

from __future__ import annotations

import sys

NAME = "mcp"
HELP = "serve memory to other agents over MCP (stdio; --http with ELORA_MCP_TOKEN)"


def configure(parser) -> None:
    parser.add_argument(
        "--http", action="store_true", help="streamable HTTP instead of stdio (needs a token)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (0: any free port)")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (also ELORA_MCP_ALLOW_REMOTE=true)",
    )


def _refuse(message: str) -> int:
    print(f"elora: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    from core.cli.context import services
    from core.mcp.auth import is_loopback

    svc = services()
    try:
        settings = svc.settings
        token = settings.mcp_token.get_secret_value() if settings.mcp_token else ""
        if args.http and not token:
            return _refuse(
                "ELORA_MCP_TOKEN is not set: refusing to serve MCP over HTTP without a token "
                "(clients send it as `Authorization: Bearer <token>`)"
            )
        allow_remote = args.allow_remote or settings.mcp_allow_remote
        if args.http and not is_loopback(args.host) and not allow_remote:
            return _refuse(
                f"--host {args.host} is not a loopback address: refusing to expose memory to "
                "the network without --allow-remote (or ELORA_MCP_ALLOW_REMOTE=true)"
            )
        if not 0 <= args.port <= 65535:
            return _refuse(f"--port {args.port} is not a TCP port")
        from core.mcp.server import bind, build_server, run_http, run_stdio
        from core.mcp.tools import MemoryTools

        server = build_server(MemoryTools(svc), settings.log_level)
        if not args.http:
            run_stdio(server)
            return 0
        try:
            sock = bind(args.host, args.port)
        except OSError as exc:
            return _refuse(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        run_http(server, sock, token, args.host)
        return 0
    finally:
        svc.close()
