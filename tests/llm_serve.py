"""Run the scripted OpenAI-compatible server (tests/llm_server.py) on its own, outside pytest.

    python -m tests.llm_serve --answer "TEXT" --env-file PATH

Every chat completion is answered with TEXT. Once the server listens, PATH holds the `export
ELORA_...=...` lines that point every model tier at it (written whole, then renamed, so a
waiting script never reads half of it). Runs until terminated. `.ci/run` uses it to check an
installed wheel: `elora ask` against a real HTTP model server, with no network.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import threading
from pathlib import Path

from tests.llm_server import FakeLLMServer, model_env


def main(argv: list[str] | None = None) -> None:
    """Start the server, publish its settings, serve until SIGTERM or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m tests.llm_serve", description=__doc__)
    parser.add_argument("--answer", required=True, help="the text of every completion")
    parser.add_argument("--env-file", type=Path, required=True, help="where to write the env")
    args = parser.parse_args(argv)

    server = FakeLLMServer().start()
    server.default_text = args.answer
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    lines = [f"export {k}={shlex.quote(v)}\n" for k, v in model_env(server.base_url).items()]
    partial = args.env_file.with_name(args.env_file.name + ".partial")
    partial.write_text("".join(lines), encoding="utf-8")
    os.replace(partial, args.env_file)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
