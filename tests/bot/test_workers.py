"""Several `elora bot` workers on one PostgreSQL and one Chroma server, as real processes
against the fake Bot API and the fake model: one polls, all answer, a worker killed in the
middle of a message loses nothing and nothing is done twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from core.config import load_settings
from core.services import Services
from tests.bot import updates
from tests.core.storage.test_chroma_server import _free_port, _stop, _wait_until_up

pytestmark = pytest.mark.postgres

STARTUP = 180.0  # two cold processes import PTB and LiteLLM and load the embedding model
WAIT = 120.0
FAMILY = updates.group_chat(-100201, "Famille")
WORK = updates.group_chat(-100202, "Travail")


@pytest.fixture
def chroma(home, tmp_path, monkeypatch):
    """The Chroma server every worker shares (CI's, or one started here)."""
    if os.environ.get("ELORA_CHROMA_URL"):  # the home fixture points at CI's server
        yield os.environ["ELORA_CHROMA_URL"]
        return
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "chroma.log"
    command = [str(Path(sys.executable).with_name("chroma")), "run", "--path",
               str(tmp_path / "chroma-data"), "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(server, url, log_path)
            monkeypatch.setenv("ELORA_CHROMA_URL", url)
            yield url
        finally:
            _stop(server)


class Workers:
    """`elora bot` processes on the test's home, database and Chroma server."""

    def __init__(self, tmp_path: Path, **env: str):
        self.tmp_path = tmp_path
        self.env = {**os.environ, "ELORA_LOG_LEVEL": "INFO", **env}
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str) -> subprocess.Popen:
        log = (self.tmp_path / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "core.cli.main", "bot"],
            env=self.env, cwd=self.tmp_path, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.processes[name] = process
        return process

    def by_pid(self, pid: int) -> str:
        return next(name for name, p in self.processes.items() if p.pid == pid)

    def logs(self) -> str:
        return "\n".join(
            f"--- {name}\n{(self.tmp_path / f'{name}.log').read_text(errors='replace')[-4000:]}"
            for name in self.processes
        )

    def stop_all(self) -> dict[str, int]:
        codes = {}
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in self.processes.items():
            try:
                codes[name] = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[name] = process.wait()
        return codes


@pytest.fixture
def workers(bot_env, chroma, tmp_path):
    """Start workers with short leases (a dead worker's chat is taken over in seconds)."""
    fleet = Workers(tmp_path, ELORA_WORKER_LEASE_SECONDS="3", ELORA_TELEGRAM_CONCURRENT_CHATS="1")
    yield fleet
    fleet.stop_all()


def _text(i: int) -> str:
    return f"[m{i:02d}] message numéro {i}"


def _answer(i: int) -> str:
    return f"réponse {i:02d}"


def _wait(predicate, what: str, workers: Workers, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{workers.logs()}"
        time.sleep(0.1)


def _rows(services: Services, sql: str, *params) -> list[tuple]:
    return services.db.rows(sql, params)


def _answers_sent(telegram) -> Counter:
    return Counter(m["text"] for m in telegram.messages())


def test_a_worker_killed_mid_message_loses_nothing_and_nothing_is_done_twice(
    workers, telegram, llm, home
):
    held = threading.Event()
    llm.answer_when("[m00]", _answer(0), hold=held)
    for i in range(1, 16):
        llm.answer_when(f"[m{i:02d}]", _answer(i))
    workers.start("first")
    _wait(lambda: telegram.calls_to("getUpdates"), "the first worker to poll", workers, STARTUP)
    workers.start("second")
    _wait(lambda: len(telegram.calls_to("setMyCommands")) >= 4, "both workers", workers, STARTUP)
    services = Services(load_settings())
    try:
        # A message whose model answer is held: whoever takes it is stuck in the middle of it.
        telegram.push(updates.message(_text(0)))
        _wait(
            lambda: _rows(services, "SELECT worker FROM updates WHERE state = 'working'")
            and _rows(services, "SELECT 1 FROM captures WHERE text = ?", _text(0)),
            "a worker to be in the middle of the held message", workers,
        )  # fmt: skip
        [(holder,)] = _rows(services, "SELECT worker FROM updates WHERE state = 'working'")
        stuck = workers.by_pid(int(holder.split(":")[1]))
        # The burst: more for the same chat (queued behind the held one) and two other chats.
        chats = [None, FAMILY, WORK]
        for i in range(1, 13):
            telegram.push(updates.message(_text(i), chat=chats[i % 3]))
        # Killed as soon as the burst is under way (the held answer waits 30 s at most).
        _wait(lambda: telegram.messages(), "the burst to be under way", workers)
        assert telegram.conflicts == 0  # one poller at a time

        workers.processes[stuck].send_signal(signal.SIGKILL)  # mid-message, mid-burst
        workers.processes[stuck].wait(timeout=30)
        held.set()
        for i in (13, 14, 15):  # after the kill: whoever polls now still receives them
            telegram.push(updates.message(_text(i), chat=chats[i % 3]))
        _wait(lambda: len(telegram.messages()) >= 16, "every answer", workers)
        codes = workers.stop_all()  # nothing more can be sent: a duplicate would be there now

        sent = _answers_sent(telegram)
        assert sent == Counter({_answer(i): 1 for i in range(16)}), sent
        private = [m["text"] for m in telegram.messages(updates.OPERATOR_ID)]
        assert private == [_answer(i) for i in (0, 3, 6, 9, 12, 15)]  # in order, despite the kill
        user_rows = _rows(services, "SELECT message_id FROM captures WHERE role = 'user'")
        answer_rows = _rows(
            services, "SELECT message_id, text FROM captures WHERE role = 'assistant'"
        )
        assert len(user_rows) == len({r[0] for r in user_rows}) == 16
        assert Counter(text for _, text in answer_rows) == Counter(sent)
        assert {mid for mid, _ in answer_rows} == {f"{r[0]}:reply" for r in user_rows}
        [(traces,)] = _rows(services, "SELECT count(*) FROM traces")
        assert traces == 16
        states = _rows(
            services, "SELECT state, attempts, count(*) FROM updates GROUP BY state, attempts"
        )
        assert sorted(states) == [("done", 1, 15), ("done", 2, 1)]  # the held one, taken over
    finally:
        services.close()
    survivor = next(n for n in workers.processes if n != stuck)
    assert codes[survivor] == 0, workers.logs()


def test_when_the_polling_worker_dies_another_one_polls(workers, telegram, llm, home):
    for i in range(4):
        llm.answer_when(f"[m{i:02d}]", _answer(i))
    first = workers.start("first")
    _wait(lambda: telegram.calls_to("getUpdates"), "the first worker to poll", workers, STARTUP)
    workers.start("second")
    _wait(lambda: len(telegram.calls_to("setMyCommands")) >= 4, "both workers", workers, STARTUP)
    telegram.push(updates.message(_text(0)))
    services = Services(load_settings())
    try:  # answered and closed (a kill between the two is the other test's case)
        _wait(lambda: _rows(services, "SELECT 1 FROM updates WHERE state = 'done'"),
              "the first message to be done", workers)  # fmt: skip
    finally:
        services.close()
    assert telegram.conflicts == 0

    first.send_signal(signal.SIGKILL)  # the poller
    first.wait(timeout=30)
    for i in range(1, 4):
        telegram.push(updates.message(_text(i)))
    _wait(lambda: len(telegram.messages()) >= 4, "answers after the poller died", workers)

    assert [m["text"] for m in telegram.messages()] == [_answer(i) for i in range(4)]
    assert workers.stop_all()["second"] == 0, workers.logs()
