import json
from datetime import datetime, timedelta

import pytest

from core.archive.records import CaptureIn
from core.cli.main import main
from core.config import load_settings
from core.services import Services
from core.storage.db import run
from tests.databases import locked

pytestmark = pytest.mark.chroma_server


def _message(n: int, text: str | None = None) -> CaptureIn:
    return CaptureIn(
        surface="telegram",
        chat_id="42",
        message_id=str(n),
        sender="Camille",
        text=text or f"message numéro {n}",
        sent_at=datetime(2024, 5, 1, 9, 0) + timedelta(minutes=n),
    )


def _stored_ids(services) -> list[str]:
    with services.db.session() as session:
        return list(run(session.connection(), "SELECT id FROM captures").scalars())


@pytest.fixture
def quick_timeout(home, monkeypatch):
    """Give up on a locked database after 50 ms instead of 5 s."""
    monkeypatch.setenv("ELORA_DB_BUSY_TIMEOUT_MS", "50")


@pytest.mark.parametrize("opened_before_lock", [True, False], ids=["open-engine", "fresh-process"])
def test_capture_goes_to_spool_while_db_is_locked_and_replay_stores_it_once(
    quick_timeout, home, embedder, capsys, opened_before_lock
):
    settings = load_settings()
    setup = Services(settings, embedder=embedder)
    assert setup.archive.capture(_message(1)).status == "stored"
    if not opened_before_lock:
        setup.close()
    services = setup if opened_before_lock else Services(settings, embedder=embedder)

    with locked(services):
        result = services.archive.capture(_message(2, "Je déménage à Lyon en mai"))
        assert result.status == "spooled"
        assert not result.durable
        assert services.spool.backlog() == 1
    services.close()

    [spool_file] = (home / "spool").glob("spool-*.jsonl")
    [record] = [json.loads(line) for line in spool_file.read_text().splitlines()]
    assert record["capture"]["id"] == result.id
    assert record["capture"]["text"] == "Je déménage à Lyon en mai"

    assert main(["jobs", "run", "replay-spool", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["stored"] == 1

    reopened = Services(settings, embedder=embedder)
    stored = _stored_ids(reopened)
    assert len(stored) == 2 and stored.count(result.id) == 1
    assert reopened.spool.backlog() == 0
    hits = reopened.vectorspace.query("archive", "where am I moving to?", 1)
    assert hits and hits[0].metadata["chat_id"] == "42"
    reopened.close()


def test_capture_goes_to_spool_when_database_path_is_unreachable(
    tmp_path, home, embedder, monkeypatch
):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file where a directory should be")
    monkeypatch.setenv("ELORA_DATABASE_URL", f"sqlite:///{blocker / 'elora.db'}")
    broken = Services(load_settings(), embedder=embedder)

    result = broken.archive.capture(_message(1))

    assert result.status == "spooled"
    assert broken.spool.backlog() == 1
    assert list((home / "spool").glob("spool-*.jsonl"))

    monkeypatch.delenv("ELORA_DATABASE_URL")  # the disk is back: the default database
    healthy = Services(load_settings(), embedder=embedder)
    report = healthy.archive.replay_spool()
    assert report["stored"] == 1
    assert _stored_ids(healthy) == [result.id]
    assert healthy.spool.backlog() == 0
    healthy.close()


def test_replaying_twice_stores_nothing_more(services):
    for n in range(3):
        services.spool.append(_message(n), reason="test")

    first = services.archive.replay_spool()
    second = services.archive.replay_spool()

    assert first["stored"] == 3
    assert second["stored"] == 0
    assert len(_stored_ids(services)) == 3


def test_capture_already_in_database_is_not_stored_again_from_spool(services):
    item = _message(1)
    services.archive.capture(item)
    services.spool.append(item, reason="written twice by a retrying surface")

    report = services.archive.replay_spool()

    assert report["stored"] == 0
    assert _stored_ids(services) == [item.id]
    assert services.spool.backlog() == 0


def test_crash_mid_replay_then_replay_stores_every_capture_exactly_once(services):
    items = [_message(n) for n in range(5)]
    for item in items:
        services.spool.append(item, reason="test")
    batches = []

    def store_then_crash(batch):
        if batches:
            raise RuntimeError("power cut")
        batches.append(batch)
        return services.archive.store_batch(batch, windows=False)

    with pytest.raises(RuntimeError, match="power cut"):
        services.spool.replay(store_then_crash, batch_size=2)
    assert len(_stored_ids(services)) == 2
    assert services.spool.backlog() == 5  # the file stays until all of it is stored

    report = services.archive.replay_spool()

    assert report["stored"] == 3
    assert sorted(_stored_ids(services)) == sorted(i.id for i in items)
    assert services.spool.backlog() == 0
    assert services.archive.counts()["chunks_pending_vectors"] == 0


def test_unparseable_line_is_set_aside_not_lost(services, home):
    services.spool.append(_message(1), reason="test")
    [spool_file] = (home / "spool").glob("spool-*.jsonl")
    garbage = '{"v": 1, "capture": {"text": "cut off by a cra'
    with open(spool_file, "a", encoding="utf-8") as fh:
        fh.write(garbage + "\n")
    services.spool.append(_message(2), reason="test")

    report = services.archive.replay_spool()

    assert report["stored"] == 2
    assert report["unreadable"] == 1
    assert len(_stored_ids(services)) == 2
    assert services.spool.backlog() == 0
    [rejected] = (home / "spool").glob("rejected-*.jsonl")
    assert rejected.read_text(encoding="utf-8") == garbage + "\n"


def test_spooled_answers_and_traces_are_replayed_once_whatever_the_reruns(services):
    question, answer = _message(1, "Le dentiste est jeudi"), _message(2, "Noté pour jeudi.")
    answer.role, answer.sender = "assistant", "Elora"
    trace = services.traces.build(surface="telegram", chat_id="42", capture_id=question.id)
    for _ in range(2):  # a surface that retried wrote them twice
        services.spool.append(question, reason="database is locked")
        services.spool.append(answer, reason="database is locked")
        services.traces.spool(trace, reason="database is locked")

    services.archive.replay_spool()  # (the retry timer may have run it already: same result)
    services.traces.spool(trace, reason="spooled again after it was stored")
    again = services.archive.replay_spool()

    assert (again["stored"], again["traces"]) == (0, 0)
    assert sorted(_stored_ids(services)) == sorted([question.id, answer.id])
    stored = services.traces.get(trace.id)
    assert stored is not None and stored.capture_id == question.id
    assert services.spool.backlog() == 0
