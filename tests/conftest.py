"""Shared fixtures: no network but loopback, a fresh ELORA_HOME per test, real stores, and one
fake OpenAI-compatible server for the run (started only when a test asks for it)."""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from typing import Any

import pytest

from tests.llm_server import FakeLLMServer, model_env

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

# Settings read from the developer's environment must not leak into tests.
for _key in list(os.environ):
    if _key.startswith("ELORA_") and not _key.startswith("ELORA_TEST_"):
        del os.environ[_key]

# A PostgreSQL server for every test's home (each in its own schema): a URL such as
# postgresql+psycopg://postgres@127.0.0.1:5432/postgres, or "auto" for a throwaway cluster.
TEST_DATABASE_URL = os.environ.get("ELORA_TEST_DATABASE_URL", "")


def pytest_collection_modifyitems(config, items):
    """Against PostgreSQL, tests of SQLite itself are skipped; without it, tests that need it."""
    for item in items:
        if TEST_DATABASE_URL and item.get_closest_marker("sqlite_only"):
            item.add_marker(
                pytest.mark.skip(reason="tests SQLite itself (ELORA_TEST_DATABASE_URL)")
            )
        if not TEST_DATABASE_URL and item.get_closest_marker("postgres"):
            item.add_marker(
                pytest.mark.skip(reason="needs ELORA_TEST_DATABASE_URL (a URL, or 'auto')")
            )


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self, address):
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network ({address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network ({address!r})")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _strict_writes():
    """A deferred transaction that writes after reading fails the test (it would fail in
    production whenever another writer commits in between): such code must use write=True."""
    from core.storage.db import Database

    Database.strict_writes = True
    yield
    Database.strict_writes = False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Every non-loopback connection fails loudly."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


@pytest.fixture(scope="session")
def embedder():
    """The real bundled embedder, loaded once for the whole run."""
    from core.embeddings import LocalE5Embedder

    return LocalE5Embedder()


@pytest.fixture(scope="session")
def pg_server():
    """The PostgreSQL server of the run (ELORA_TEST_DATABASE_URL; "auto": a throwaway cluster
    started here and removed after the run)."""
    from tests.pg_cluster import PostgresCluster, TestSchemas

    if not TEST_DATABASE_URL:
        pytest.skip("needs ELORA_TEST_DATABASE_URL (a URL, or 'auto')")
    if TEST_DATABASE_URL != "auto":
        schemas = TestSchemas(TEST_DATABASE_URL)
        yield schemas
        schemas.close()
        return
    cluster = PostgresCluster()
    try:
        cluster.start()
    except RuntimeError as exc:
        cluster.stop()
        pytest.fail(f"could not start PostgreSQL: {exc}\n{cluster.log_tail()}")
    os.environ["ELORA_TEST_PG_DATA"] = str(cluster.data)  # forget tests read its files
    try:
        schemas = TestSchemas(cluster.url())
        yield schemas
        schemas.close()
    finally:
        cluster.stop()
        os.environ.pop("ELORA_TEST_PG_DATA", None)


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty schema on the test PostgreSQL server; dropped after the test."""
    url = pg_server.create()
    yield url
    pg_server.drop(url)


@pytest.fixture
def pg_home_url(pg_server):
    """A fresh PostgreSQL database with the schema already migrated; dropped after the test."""
    url = pg_server.home()
    yield url
    pg_server.drop_home(url)


@pytest.fixture
def home(tmp_path, monkeypatch, request):
    """A fresh ELORA_HOME; also the working directory, so no stray .env or elora.toml is read."""
    home = tmp_path / "home"
    monkeypatch.setenv("ELORA_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    chroma_url = os.environ.get("ELORA_TEST_CHROMA_URL")
    if chroma_url:  # CI runs the storage tests once more against a `chroma run` server
        monkeypatch.setenv("ELORA_CHROMA_URL", chroma_url)
        # CI tells the PostgreSQL rerun's collections from the others' by their first letters.
        tag = os.environ.get("ELORA_TEST_CHROMA_TAG", "t")
        monkeypatch.setenv("ELORA_CHROMA_PREFIX", f"{tag}{uuid.uuid4().hex[:10]}-")
    if TEST_DATABASE_URL:  # ... and the database suites against a PostgreSQL server
        monkeypatch.setenv("ELORA_DATABASE_URL", request.getfixturevalue("pg_home_url"))
    return home


@pytest.fixture
def settings(home):
    """Settings for the tmp home."""
    from core.config import load_settings

    return load_settings()


@pytest.fixture
def services(settings, embedder, clock):
    """Real services (SQLite + Chroma) on the tmp home, sharing the loaded embedder, reading
    the `clock` fixture (a directory's conftest pins it by overriding `clock` alone)."""
    from core.services import Services

    svc = Services(settings, embedder=embedder, clock=clock)
    yield svc
    svc.close()


@pytest.fixture(scope="session")
def llm_server():
    """One fake OpenAI-compatible server for the whole run (LiteLLM is imported once); the
    fixtures handing it to a test reset it first."""
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm(llm_server, home, monkeypatch):
    """The fake server with empty queues, configured as LITE/FLASH/PRO through ELORA_* vars."""
    llm_server.reset()
    for key, value in model_env(llm_server.base_url).items():
        monkeypatch.setenv(key, value)
    return llm_server


@pytest.fixture
def clock():
    """The clock services read: the system's, unless a directory pins one."""
    from core.clock import SystemClock

    return SystemClock()


@pytest.fixture
def make_services(llm, embedder, clock, monkeypatch):
    """Build Services after setting more ELORA_* variables (None unsets one); closed after."""
    from core.config import load_settings
    from core.services import Services

    opened = []

    def build(**env: Any):
        for key, value in env.items():
            if value is None:
                monkeypatch.delenv(f"ELORA_{key}", raising=False)
            else:
                monkeypatch.setenv(f"ELORA_{key}", str(value))
        svc = Services(load_settings(), clock=clock, embedder=embedder)
        opened.append(svc)
        return svc

    yield build
    for svc in opened:
        svc.close()
