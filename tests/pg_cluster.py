"""A throwaway PostgreSQL cluster on 127.0.0.1 for tests and CI, and one schema per test in it.

    python -m tests.pg_cluster --env-file PATH     # start one, publish its URL, serve until TERM

The server binaries come from Debian's `postgresql` package (/usr/lib/postgresql/N/bin) or
from PATH. `initdb` refuses to run as root, so under root the cluster belongs to the
`postgres` user (`runuser -u postgres`). The data directory lives in a temporary directory
and the server listens on a free loopback port with trust authentication: it holds test data
only and is removed when stopped. Durability is off (fsync, synchronous_commit) because a
test cluster never outlives a crash.

Every test gets a fresh schema: its URL sets `search_path` to that schema, so the code under
test creates its tables, text search configurations and indexes there through the same
migrations a real server gets, and dropping the schema removes all of it. A test's home (the
`home` fixture) gets a database of its own instead, copied from one this process migrated
once (CREATE DATABASE … TEMPLATE): migrating every home again cost most of the suites' time.
With ELORA_TEST_KEEP_SCHEMAS set, the rows a home held are added up in `elora_ci.test_rows` of
the server's database before it is dropped, so that CI can check what the suites wrote.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

DRIVER = "postgresql+psycopg"


def server_bindir() -> Path | None:
    """Where initdb and pg_ctl are: the newest /usr/lib/postgresql/N/bin, else PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresCluster:
    """initdb + pg_ctl in a temporary directory; `url()` for a database, `stop()` removes it."""

    def __init__(self, bindir: Path | None = None):
        self.bindir = bindir or server_bindir()
        if self.bindir is None:
            raise RuntimeError(
                "PostgreSQL server binaries not found: apt-get install postgresql "
                "(or put initdb and pg_ctl on PATH)"
            )
        self.root: Path | None = None
        self.port = 0
        self.user = "postgres"

    @property
    def _as_owner(self) -> list[str]:
        # initdb and postgres refuse root; the cluster then belongs to the postgres user.
        return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as_owner, *args], capture_output=True, text=True, cwd=self.root, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stdout}{done.stderr}")

    def start(self) -> PostgresCluster:
        """Create the cluster, start the server, wait until it accepts connections."""
        self.root = Path(tempfile.mkdtemp(prefix="elora-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.root, user="postgres")
        else:
            self.user = os.environ.get("USER") or "postgres"
        data = self.root / "data"
        self._run(
            str(self.bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", self.user,
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        self.port = _free_port()
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(data), "-l", str(self.root / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip
        # The postgres database (where the tests' schemas live) and every database made from
        # template1 have unaccent already, in public (a server administrator's step on real
        # servers; the migration only checks for it there). Left to the first test, it would
        # land in that test's schema, out of the other schemas' sight.
        for database in ("postgres", "template1"):
            self.admin("CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public", database=database)
        return self

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        assert self.root is not None, "the cluster is not started"
        return self.root / "data"

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        """A SQLAlchemy URL for a database (and a search_path starting at `schema`)."""
        url = f"{DRIVER}://{self.user}@127.0.0.1:{self.port}/{database}"
        return with_schema(url, schema) if schema else url

    def admin(self, sql: str, database: str = "postgres") -> None:
        """Run one statement outside a transaction (CREATE DATABASE and friends)."""
        import psycopg

        conninfo = f"host=127.0.0.1 port={self.port} user={self.user} dbname={database}"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql)

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server log (for a failed start)."""
        path = self.root / "server.log" if self.root else None
        if path is None or not path.exists():
            return ""
        return "".join(path.read_text(errors="replace").splitlines(keepends=True)[-lines:])

    def stop(self) -> None:
        """Stop the server at once and remove every file of the cluster."""
        if self.root is None:
            return
        data = self.root / "data"
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                self._run(str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None


def with_schema(url: str, schema: str) -> str:
    """`url` whose connections search `schema` first (then public, where extensions live)."""
    parts = urlsplit(url)
    option = quote(f"-csearch_path={schema},public", safe="")
    query = f"{parts.query}&options={option}" if parts.query else f"options={option}"
    return urlunsplit(parts._replace(query=query))


class TestSchemas:
    """Fresh schemas on one server: `create()` returns a URL, `drop(url)` removes it all."""

    __test__ = False  # not a pytest test class

    def __init__(self, server_url: str):
        self.server_url = server_url
        self._template: str | None = None

    def _admin(self, sql: str) -> None:
        from sqlalchemy import create_engine

        engine = create_engine(self.server_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SET lock_timeout = '30s'")
                conn.exec_driver_sql(sql)
        finally:
            engine.dispose()

    def create(self) -> str:
        """A new empty schema; the URL that works in it."""
        schema = f"t{uuid.uuid4().hex[:12]}"
        self._admin(f"CREATE SCHEMA {schema}")
        return with_schema(self.server_url, schema)

    def drop(self, url: str) -> None:
        """Drop the schema of `url` and everything in it (kept when ELORA_TEST_KEEP_SCHEMAS is
        set, so that CI can count what the tests wrote)."""
        if os.environ.get("ELORA_TEST_KEEP_SCHEMAS"):
            return
        query = dict(p.split("=", 1) for p in urlsplit(url).query.split("&") if "=" in p)
        schema = unquote(query["options"]).split("=", 1)[1].split(",", 1)[0]
        self._admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def _database_url(self, name: str) -> str:
        parts = urlsplit(self.server_url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def home(self) -> str:
        """A new database with every migration applied (a copy of this process's template);
        the URL that works in it."""
        if self._template is None:
            from core.storage.db import Database

            template = f"template_{os.getpid()}_{uuid.uuid4().hex[:6]}"
            self._admin(f"CREATE DATABASE {template}")
            db = Database(self._database_url(template))
            try:
                with db.session():
                    pass  # opening it migrates it
            finally:
                db.close()  # a template must have no connection while it is copied
            self._template = template
        name = f"h{uuid.uuid4().hex[:12]}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE {self._template}")
        return self._database_url(name)

    def drop_home(self, url: str) -> None:
        """Drop a home's database (its rows tallied first under ELORA_TEST_KEEP_SCHEMAS)."""
        name = urlsplit(url).path.lstrip("/")
        if os.environ.get("ELORA_TEST_KEEP_SCHEMAS"):
            self._tally(url, name)
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _tally(self, url: str, name: str) -> None:
        from sqlalchemy import create_engine

        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                rows = {
                    table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one()
                    for table in TALLIED
                }
        finally:
            engine.dispose()
        values = ", ".join(f"('{name}', '{table}', {n})" for table, n in rows.items())
        # In a schema of its own: the tests' schemas search `public`, where it would be a table
        # of every home (migrate-store refuses a target that is not empty).
        self._admin(
            "CREATE SCHEMA IF NOT EXISTS elora_ci; "
            "CREATE TABLE IF NOT EXISTS elora_ci.test_rows (home TEXT, tbl TEXT, n BIGINT)"
        )
        self._admin(f"INSERT INTO elora_ci.test_rows VALUES {values}")

    def close(self) -> None:
        """Drop this process's template database."""
        if self._template is not None:
            self._admin(f"DROP DATABASE IF EXISTS {self._template} WITH (FORCE)")
            self._template = None


# Tables whose rows CI adds up (what the database suites must have written to the server).
TALLIED = ("captures", "chunks", "memory_entries", "traces", "updates", "turn_keys")


def main(argv: list[str] | None = None) -> None:
    """Start a cluster, write `export ELORA_TEST_DATABASE_URL=...` to PATH, serve until TERM."""
    parser = argparse.ArgumentParser(prog="python -m tests.pg_cluster", description=__doc__)
    parser.add_argument("--env-file", type=Path, required=True, help="where to write the env")
    args = parser.parse_args(argv)
    cluster = PostgresCluster()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        cluster.start()
    except RuntimeError as exc:
        cluster.stop()
        raise SystemExit(f"{exc}\n{cluster.log_tail()}") from None
    try:
        line = (
            f"export ELORA_TEST_DATABASE_URL={shlex.quote(cluster.url())}\n"
            f"export ELORA_TEST_PG_DATA={shlex.quote(str(cluster.data))}\n"
        )
        partial = args.env_file.with_name(args.env_file.name + ".partial")
        partial.write_text(line, encoding="utf-8")
        os.replace(partial, args.env_file)
        print(f"postgresql up at 127.0.0.1:{cluster.port} ({cluster.bindir})", flush=True)
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
