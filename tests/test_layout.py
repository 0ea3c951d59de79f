"""How the parts connect, checked on the source (see the README's Architecture section):

- surfaces (Telegram, the cockpit, the command line, MCP) reach the core through one front door,
  `core.app`, and import nothing else of the core but the types, errors and settings they show;
- every table has one owner: SQL (raw, or built with SQLAlchemy) lives only in the owning
  modules, and each owner touches only its own tables.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# -- surfaces ------------------------------------------------------------------------------

SURFACES = ("bot", "cockpit", "core/cli", "core/mcp")
# What a surface may import from the core: the front door, and what it shows or is handed.
SURFACE_MAY_IMPORT = {
    "core.app",  # every use case
    "core.errors",  # what it translates for the user
    "core.config",  # its settings (tokens, allowlists, language)
    "core.services",  # the services object it is handed (wire once)
    "core.clock",  # the clock protocol (MCP confirmations expire)
    "core.offload",  # how an async surface runs blocking front-door calls off its loop
    "core.memory.vocabulary",  # tiers, kinds and statuses it offers as choices
    "core.preload",  # what a one-shot command starts loading before it imports the rest
}
# Services attributes a surface may read itself: everything else goes through core.app.
SERVICES_MAY_READ = {"settings", "clock", "close"}
STORES = {
    "archive", "assistant", "chats", "db", "embedder", "learner", "llm", "memory", "profile",
    "proposals", "session_memory", "spend", "spool", "traces", "vectors", "vectorspace",
    "window",
}  # fmt: skip

# -- table owners --------------------------------------------------------------------------

# Each module allowed to hold SQL, and the tables it owns. Everyone else calls its methods.
OWNERS: dict[str, set[str]] = {
    "core/storage/db.py": set(),  # connection pragmas, BEGIN, the WAL checkpoint
    "core/storage/checkpoints.py": set(),  # the WAL checkpoint, on a thread of its own
    "core/storage/migrations.py": {"*"},  # the schema of every table
    "core/storage/dialect.py": set(),  # INSERT … ON CONFLICT, spelled per dialect
    # PostgreSQL (issue 16): the engine's locks and VACUUM; full-text search on both databases
    # (FTS5 MATCH or tsvector @@, the same BM25) for the owners that search their tables.
    "core/storage/postgres.py": {"pg_stat_activity"},
    "core/storage/fulltext.py": {
        "captures",
        "chunks",
        "memory_entries",
        "turn_keys",
        "captures_vocab",
        "captures_fts",
        "chunks_fts",
        "entries_fts",
        "turn_keys_fts",
        "pg_class",
        "pg_extension",
        "pg_ts_config_map",
    },
    # `elora migrate-store` copies every table of a home into another database.
    "core/storage/transfer.py": {"*"},
    # Several workers (issue 16): the shared update queue and scheduled jobs' claims.
    "core/workers/updates.py": {"updates"},
    "core/workers/coordination.py": set(),
    "core/jobs/claims.py": {"job_claims"},
    "core/storage/meta.py": {"meta"},
    "core/archive/store.py": {
        "captures",
        "chunks",
        "chunk_captures",
        "captures_fts",
        "chunks_fts",
    },
    "core/archive/captures.py": {
        "captures",
        "chunks",
        "chunk_captures",
        "learned_captures",
        "captures_fts",
        "chunks_fts",
    },
    "core/memory/entries.py": {"memory_entries", "entry_links", "entries_fts"},
    "core/memory/entry_search.py": {"memory_entries", "entries_fts"},
    # The stamp triggers move with every change to the entries and their links (migration 21).
    "core/memory/standing.py": {"memory_stamp"},
    "core/memory/recalls.py": {"entry_recalls", "memory_entries"},
    "core/memory/tombstones.py": {"tombstones", "forget_log"},
    "core/memory/session.py": {"session_chunks"},
    "core/learning/proposals.py": {"proposals"},
    "core/traces.py": {"traces"},
    "core/chats.py": {"chat_settings", "surface_messages", "handled_updates"},
    "core/threads.py": {"threads"},
    "core/routing/profile.py": {"capability_profile"},
    # Undo (issue 17): versions and the undo log are their modules' own tables.
    "core/memory/versions.py": {"entry_versions"},
    "core/undo/log.py": {"undo_actions"},
    # A forget's undo puts back, in one transaction and exactly as they were, the rows the
    # forget erased or rewrote in other owners' tables (held in memory, never on disk).
    "core/memory/unforget.py": {
        "memory_entries",
        "entry_links",
        "proposals",
        "entry_versions",
        "undo_actions",
        "captures",
        "tombstones",
        "forget_log",
        "traces",
        "threads",
    },
    # Turn keys (issue 13): each message read with the turn it answers, its dates and the
    # facts a model found in it, built from the archive's messages and windows.
    "core/archive/turns.py": {
        "turn_keys",
        "turn_dates",
        "turn_keys_fts",
        "captures",
        "chunks",
        "chunk_captures",
    },
    "core/archive/fact_keys.py": {"turn_keys", "captures", "chunks"},
    # Who imported which chats (recall scopes).
    "core/importers/runner.py": {"chat_imports"},
    # Recall reads the archive and entries for the evidence pack (its own queries, pending
    # their move to the archive and memory owners).
    "core/recall/scope.py": {"captures", "chat_imports"},
    "core/recall/selection.py": {"captures", "turn_keys"},
    "core/recall/turn_search.py": {
        "captures",
        "captures_fts",
        "chunk_captures",
        "chunks",
        "turn_dates",
        "turn_keys",
        "turn_keys_fts",
    },
    # The chat and date of a probe's nearest turns (core.recall.turn_probe).
    "core/recall/turn_probe.py": {"captures", "turn_keys"},
    # Where later messages start (the date order's smallest rowids, kept per database).
    "core/recall/later_start.py": {"captures"},
    # captures_fts_data: FTS5's own table, read for the index's stamp (shared word counts).
    "core/recall/vocabulary.py": {"captures", "captures_vocab", "captures_fts_data"},
    "core/recall/archive_search.py": {"captures", "chunks", "chunk_captures", "chunks_fts"},
    "core/recall/items.py": {"captures", "chunks", "chunk_captures"},
    "core/recall/pack.py": {"memory_entries"},
}
MODEL_TABLES = {
    "Capture": "captures", "Chunk": "chunks", "ChunkCapture": "chunk_captures",
    "LearnedCapture": "learned_captures", "MemoryEntry": "memory_entries",
    "EntryLink": "entry_links", "Tombstone": "tombstones", "ForgetLog": "forget_log",
    "SessionChunk": "session_chunks", "Proposal": "proposals", "Trace": "traces",
    "ChatSetting": "chat_settings", "SurfaceMessage": "surface_messages",
    "HandledUpdate": "handled_updates", "Thread": "threads", "Meta": "meta",
    "CapabilityDimension": "capability_profile", "EntryRecall": "entry_recalls",
    "EntryVersion": "entry_versions", "UndoAction": "undo_actions",
}  # fmt: skip
# Calls that run SQL given as a string.
RAW_CALLS = {"exec_driver_sql", "rows", "execute", "executemany", "executescript"}
# Names that build statements (their modules are where SQL is written).
BUILDERS = {"select", "insert", "update", "delete", "text", "func", "col", "type_coerce",
            "insert_ignoring", "upsert", "table", "column"}  # fmt: skip
SQL_MODULES = ("sqlalchemy", "sqlmodel", "core.storage.dialect")
SQL_WORDS = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH)\b", re.I)
# A table named in SQL (written in capitals here; a name followed by "(" is a function).
# (Not ON CONFLICT … DO UPDATE SET, SELECT … FOR UPDATE SKIP LOCKED, a trigger's OR UPDATE OF.)
TABLE_NAMED = re.compile(
    r"\b(?:FROM|JOIN|INTO|(?<!DO )(?<!FOR )(?<!OR )UPDATE|TABLE(?: IF NOT EXISTS)?)\s+(\w+)\b"
    r"(?!\s*\()"
)
SQL_TEXT = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE)\b")
# A common table expression the statement itself defines (WITH [RECURSIVE] name(cols) AS (…)):
# read FROM like a table, owned by the statement.
CTE_NAMED = re.compile(r"\b(?:WITH(?: RECURSIVE)?|,)\s+(\w+)\s*(?:\([\w, ]*\))?\s+AS\s*\(")


def _sources(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (ROOT / root).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _module(path: Path) -> str:
    return _name(path).removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _imports(tree: ast.Module, module: str) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import, relative ones resolved."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level]
                base = ".".join([*package, base] if base else package)
            found.append((node.lineno, base, [alias.name for alias in node.names]))
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines inside `if TYPE_CHECKING:` blocks (imports for annotations only)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _core_targets(imported: str, names: list[str]) -> list[str]:
    """The core modules an import reaches (`from core import app` reaches core.app)."""
    if imported == "core":
        return [f"core.{n}" for n in names]
    return [imported] if imported == "core" or imported.startswith("core.") else []


def _allowed_for_surface(target: str, surface: str) -> bool:
    # A surface may start another (`elora mcp` serves core.mcp): surfaces are not the core.
    surfaces = [s.replace("/", ".") for s in SURFACES]
    return any(
        target == ok or target.startswith(f"{ok}.") for ok in (*SURFACE_MAY_IMPORT, *surfaces)
    )


@pytest.mark.parametrize("surface", SURFACES)
def test_surfaces_import_only_the_front_door_and_what_they_show(surface):
    wrong = []
    for path in _sources(surface):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, imported, names in _imports(tree, _module(path)):
            for target in _core_targets(imported, names):
                if not _allowed_for_surface(target, surface):
                    wrong.append(f"{_name(path)}:{line} imports {target}")
    assert not wrong, "surfaces go through core.app:\n" + "\n".join(wrong)


def _services_reads(tree: ast.Module) -> list[tuple[int, str]]:
    """Attributes read on a services object: `services.x`, `svc.x`, `….services.x`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        named = isinstance(owner, ast.Name) and owner.id in ("services", "svc")
        if named or (isinstance(owner, ast.Attribute) and owner.attr == "services"):
            found.append((node.lineno, node.attr))
    return found


@pytest.mark.parametrize("surface", SURFACES)
def test_surfaces_reach_no_store_of_the_services(surface):
    wrong = []
    for path in _sources(surface):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, attribute in _services_reads(tree):
            if attribute in STORES or attribute not in SERVICES_MAY_READ:
                wrong.append(f"{_name(path)}:{line} reads services.{attribute}")
    assert not wrong, "surfaces call core.app, not the stores:\n" + "\n".join(wrong)


def _strings(tree: ast.Module) -> list[tuple[int, str]]:
    """Every string constant but docstrings (f-strings by their literal parts)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def _sql_calls(tree: ast.Module) -> list[int]:
    """Lines running SQL from a string: exec_driver_sql(...), text(...), x.execute("SELECT…")."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0] if node.args else None
        text = None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            text = first.value
        elif isinstance(first, ast.JoinedStr):
            text = ast.unparse(first)[2:]
        literal = text is not None and SQL_WORDS.match(text)
        if name == "exec_driver_sql" or (name in (*RAW_CALLS, "text") and literal):
            lines.append(node.lineno)
    return lines


def _builders(tree: ast.Module) -> list[tuple[int, str]]:
    """Statement builders imported for use at run time (not for annotations)."""
    hidden = _type_checking_lines(tree)
    found = []
    for line, imported, names in _imports(tree, ""):
        if line in hidden or not imported.startswith(SQL_MODULES):
            continue
        found += [(line, f"{imported}.{n}") for n in names if n in BUILDERS]
        if not names and imported in ("sqlalchemy", "sqlmodel"):
            found.append((line, imported))  # `import sqlalchemy as sa`: every builder
    return found


def _models_used(tree: ast.Module) -> list[tuple[int, str]]:
    """Table models used in code (in statements, session.get…), not only in annotations."""
    annotations: set[int] = set()
    for node in ast.walk(tree):
        parts = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            parts.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            parts.append(node.returns)
        for part in parts:
            annotations |= {id(inner) for inner in ast.walk(part)}
    return [
        (node.lineno, node.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in MODEL_TABLES and id(node) not in annotations
    ]


def test_sql_lives_only_in_the_owners_of_the_tables():
    wrong = []
    for path in _sources("bot", "cockpit", "core"):
        name = _name(path)
        if name in OWNERS or name == "core/storage/models.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrong += [f"{name}:{line} runs SQL" for line in _sql_calls(tree)]
        wrong += [f"{name}:{line} builds statements ({what})" for line, what in _builders(tree)]
    assert not wrong, "SQL belongs to the tables' owners (OWNERS):\n" + "\n".join(wrong)


@pytest.mark.parametrize("owner", sorted(OWNERS))
def test_each_owner_touches_only_its_tables(owner):
    tables = OWNERS[owner]
    if "*" in tables:
        return
    tree = ast.parse((ROOT / owner).read_text(encoding="utf-8"))
    named = {
        (line, table.lower())
        for line, value in _strings(tree)
        if SQL_TEXT.search(value)
        for table in set(TABLE_NAMED.findall(value)) - set(CTE_NAMED.findall(value))
    }
    named |= {(line, MODEL_TABLES[n]) for line, n in _models_used(tree)}
    wrong = [f"{owner}:{line} touches {table}" for line, table in sorted(named)
             if table not in tables]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_the_rules_catch_what_they_are_about():
    """The checks above would see a violation (so a passing run means something)."""
    surface_code = ast.parse(
        "from core.memory.api import remember\nfrom core import app, pipeline\n"
        "services.memory.get('x')\ncontext.services.settings.token\n"
    )
    imports = [t for _, m, n in _imports(surface_code, "bot.x") for t in _core_targets(m, n)]
    assert [t for t in imports if not _allowed_for_surface(t, "bot")] == [
        "core.memory.api", "core.pipeline",
    ]  # fmt: skip
    assert sorted(a for _, a in _services_reads(surface_code)) == ["memory", "settings"]
    sql_code = ast.parse(
        "conn.exec_driver_sql(x)\ndb.rows('SELECT 1 FROM captures')\nsession.exec(text('DELETE "
        "FROM traces'))\nfrom sqlmodel import select\nitems.execute(job)\n"
    )
    assert sorted(_sql_calls(sql_code)) == [1, 2, 3]
    assert [w for _, w in _builders(sql_code)] == ["sqlmodel.select"]
    owner_code = ast.parse(
        '"""Doc FROM docs."""\nsql = "SELECT id FROM proposals p JOIN json_each(p.x) j"\nnote = "from the archive"\n'
        "def f(e: Trace) -> Chunk:\n    return select(Capture)\n"
    )
    tables = {
        t for _, v in _strings(owner_code) if SQL_TEXT.search(v) for t in TABLE_NAMED.findall(v)
    }
    assert tables == {"proposals"}
    assert [n for _, n in _models_used(owner_code)] == ["Capture"]
