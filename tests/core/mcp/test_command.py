"""`elora mcp --help` stays fast: the SDK and its web stack load only when the server runs."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("mcp", "mcp_types", "starlette", "uvicorn", "litellm", "chromadb", "sqlmodel")

_HELP = """
import contextlib, io, json, sys
from core.cli.main import build_parser

out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        build_parser().parse_args(["mcp", "--help"])
    except SystemExit as exc:
        code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[1])))
print(json.dumps({"code": code, "help": out.getvalue(), "heavy": heavy}))
"""


def test_mcp_help_imports_neither_the_sdk_nor_the_web_stack(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _HELP, json.dumps(HEAVY)],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)

    assert report["code"] == 0
    assert "--http" in report["help"] and "--allow-remote" in report["help"]
    assert report["heavy"] == []
