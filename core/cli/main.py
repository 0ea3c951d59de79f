"""Entry point of the `elora` console script: parse, dispatch, translate errors."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Subcommand modules, in the order `elora --help` lists them.
COMMAND_MODULES = (
    "cockpit",
    "bot",
    "doctor",
    "import_cmd",
    "remember",
    "memories",
    "forget",
    "undo",
    "history",
    "restore",
    "context",
    "mcp",
    "ask",
    "chat",
    "traces",
    "proposals",
    "learn",
    "mirror",
    "mirror_import",
    "audit",
    "council",
    "skills",
    "jobs",
    "reindex",
    "migrate_store",
)


def _environment_defaults() -> None:
    # Set before anything imports litellm or loads the embedding model.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def build_parser() -> argparse.ArgumentParser:
    """The full parser; command modules are imported but none of their heavy dependencies."""
    parser = argparse.ArgumentParser(
        prog="elora",
        description="Elora: a personal assistant with a memory you can trust.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"core.cli.commands.{name}")
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.configure(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit code."""
    _environment_defaults()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from core.errors import ConfigError, EloraError

    try:
        if getattr(args, "json", False):
            from core.cli.context import document_stdout

            with document_stdout():
                return int(args._run(args) or 0)
        return int(args._run(args) or 0)
    except ConfigError as exc:
        print(f"elora: configuration error: {exc}", file=sys.stderr)
        return 2
    except EloraError as exc:
        print(f"elora: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("elora: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
