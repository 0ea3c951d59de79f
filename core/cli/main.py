"""Entry point of the `elora` console script: parse, dispatch, translate errors."""

from __future__ import annotations

import argparse
import gc
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


# Commands that do a bounded piece of work and exit: as a process of their own they run with
# the garbage collector paused (see _as_process). Long-running ones (bot, cockpit, chat, MCP,
# imports, jobs) keep it.
ONE_SHOT = frozenset({
    "context", "memories", "remember", "forget", "undo", "history", "restore", "traces",
    "proposals", "doctor", "skills", "ask",
})  # fmt: skip


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
        cmd.set_defaults(_run=module.run, _embeds=getattr(module, "embeds", None))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit code (argv None: this process's command line,
    run as the `elora` console script runs it)."""
    if argv is None:
        return _as_process(sys.argv[1:])
    return _run(argv)


def _as_process(argv: list[str]) -> int:
    """Run a command as the whole process. Half the CPU of a one-shot command such as
    `elora context` went to the garbage collector: its passes over the objects of every
    imported module while they load (cycles are rare there), and one full pass at exit.
    So it stays paused for a one-shot command, and the objects still alive at the end are
    frozen, which the collection at interpreter exit skips."""
    gc.disable()
    try:
        return _run(argv, one_shot=True)
    finally:
        gc.freeze()


def _run(argv: list[str], one_shot: bool = False) -> int:
    _environment_defaults()
    parser = build_parser()
    args = parser.parse_args(argv)
    if one_shot and args.command not in ONE_SHOT:
        gc.enable()  # a long run makes garbage cycles for as long as it lives
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    if one_shot and args._embeds is not None and args._embeds(args):
        from core.preload import load_model_early

        load_model_early()  # while the command imports its modules and opens the home
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
