"""`elora learn`: extraction over archived history in batches, resumable, filtered by chat and
date, under the same consent rules as live learning."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from core.cli.main import main
from core.importers import telegram
from core.learning import backfill
from core.learning.backfill import count_pending, learn_archive
from core.storage.db import run
from tests.core.learning.support import NOW, capture, proposals

EXPORT = Path(__file__).resolve().parents[3] / "data" / "examples" / "telegram" / "result.json"
LEA, TOM = "5098765432", "5034567890"


def import_example(services) -> int:
    """Archive the shipped Telegram export (without embedding it: learning reads text)."""
    data = json.loads(EXPORT.read_text(encoding="utf-8"))
    items = [c for c in telegram.parse(data, "result.json") if not isinstance(c, telegram.Skipped)]
    return services.archive.store_batch(items)


def learnable(services, chat_id: str | None = None, since: str | None = None) -> int:
    """Operator messages `elora learn` should read: long enough to say something."""
    sql = "SELECT count(*) FROM captures WHERE role = 'user' AND length(text) >= 8"
    params: list = []
    if chat_id:
        sql += " AND chat_id = ?"
        params.append(chat_id)
    if since:
        sql += " AND sent_at >= ?"
        params.append(since)
    with services.db.session() as session:
        return run(session.connection(), sql, tuple(params)).scalar_one()


def learn_cli(capsys, *args: str) -> dict:
    assert main(["learn", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_elora_learn_turns_an_imported_export_into_proposals_and_a_rerun_adds_nothing(
    services, capsys
):
    assert import_example(services) > 250
    expected = learnable(services)
    assert expected > 10 * backfill.BATCH  # several batches

    first = learn_cli(capsys)

    assert first["messages"] == expected and first["extractor"] == "heuristic"
    assert first["proposals"] >= 10 and first["failures"] == 0
    assert main(["proposals", "--status", "all", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == first["proposals"]
    assert all(p["origin"] == "learn" and p["source_capture_ids"] for p in listed)
    assert any("Lyon" in p["text"] for p in listed)

    second = learn_cli(capsys)

    assert second["messages"] == 0 and second["proposals"] == 0
    assert main(["proposals", "--status", "all", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == len(listed)


def test_elora_learn_can_be_limited_to_one_chat_and_resumes_with_the_rest(services, capsys):
    import_example(services)
    tom = learnable(services, TOM)

    only_tom = learn_cli(capsys, "--chat", TOM)

    assert only_tom["messages"] == tom
    sources = [p.source_capture_ids[0] for p in proposals(services)]
    with services.db.session() as session:
        chats = {
            run(
                session.connection(), "SELECT chat_id FROM captures WHERE id = ?", (s,)
            ).scalar_one()
            for s in sources
        }
    assert chats == {TOM}
    rest = learn_cli(capsys)
    assert rest["messages"] == learnable(services) - tom


def test_elora_learn_since_a_date_skips_older_messages(services, capsys):
    import_example(services)
    recent = learnable(services, since="2024-06-01")
    assert 0 < recent < learnable(services)

    outcome = learn_cli(capsys, "--since", "2024-06-01")

    assert outcome["messages"] == recent
    assert count_pending(services, None, None) == learnable(services) - recent


def test_elora_learn_refuses_a_malformed_date(home, capsys):
    assert main(["learn", "--since", "last tuesday"]) == 1
    assert "--since" in capsys.readouterr().err


async def test_old_messages_score_lower_recency_than_fresh_ones(services):
    old = capture(services, "Je travaille chez Lumen Logistics depuis 2019.", datetime(2023, 4, 1))
    fresh = capture(services, "Mon manager s'appelle Karim Haddad.", NOW)

    await learn_archive(services)

    by_source = {p.source_capture_ids[0]: p for p in proposals(services)}
    assert by_source[old].scores["temporal_recency"] < 0.25
    assert by_source[fresh].scores["temporal_recency"] == 1.0


async def test_a_suppressed_message_is_skipped_by_the_heuristic_learner(services):
    capture(services, "Je suis allergique au latex, mais ne retiens pas ça.")

    outcome = await learn_archive(services)

    # Not even read: a message under a consent instruction is material for no job.
    assert outcome["messages"] == 0 and outcome["proposals"] == 0
    assert count_pending(services, None, None) == 0


async def test_the_model_learner_reads_the_archive_in_batches_and_cites_each_message(
    model_services, lite, monkeypatch
):
    monkeypatch.setattr(backfill, "BATCH", 3)
    ids = [
        capture(model_services, f"Message numéro {n} sans rien de spécial", datetime(2025, 4, n))
        for n in range(1, 6)
    ]
    lite.enqueue(
        "fake-lite",
        json.dumps({"candidates": [{"text": "Camille plays the cello", "kind": "fact",
                                    "messages": [2]}]}),
        json.dumps({"candidates": [{"text": "Camille lives in Lyon", "kind": "fact",
                                    "messages": [2]}]}),
    )  # fmt: skip

    outcome = await learn_archive(model_services)

    assert outcome == {"messages": 5, "proposals": 2, "blocked": 0, "failures": 0,
                       "extractor": "model"}  # fmt: skip
    assert len(lite.requests_for("fake-lite")) == 2
    cited = {p.text: p.source_capture_ids for p in proposals(model_services)}
    assert cited == {"Camille plays the cello": [ids[1]], "Camille lives in Lyon": [ids[4]]}


async def test_a_failed_model_extraction_leaves_its_batch_for_the_next_run(model_services, lite):
    capture(model_services, "Je travaille chez Lumen Logistics depuis 2019.")
    lite.enqueue("fake-lite", "Sorry, I cannot help with that.")

    failed = await learn_archive(model_services)

    assert failed["failures"] == 1 and failed["messages"] == 0
    assert count_pending(model_services, None, None) == 1
    lite.enqueue(
        "fake-lite",
        json.dumps({"candidates": [{"text": "Camille works at Lumen Logistics", "kind": "fact"}]}),
    )
    retried = await learn_archive(model_services)
    assert retried["messages"] == 1 and retried["proposals"] == 1


async def test_the_model_learner_never_sees_a_message_the_operator_asked_to_forget(
    model_services, lite
):
    capture(model_services, "Mon code de carte est 4412, ne retiens pas ça.")
    capture(model_services, "Je travaille chez Lumen Logistics depuis 2019.")
    lite.enqueue("fake-lite", json.dumps({"candidates": []}))

    await learn_archive(model_services)

    [request] = lite.requests_for("fake-lite")
    prompt = request["messages"][-1]["content"]
    assert "Lumen" in prompt and "4412" not in prompt


@pytest.mark.parametrize("extractor", ["heuristic", "model"])
async def test_explicit_statements_in_the_archive_are_operator_approvals(
    extractor, home, embedder, clock, lite, monkeypatch
):
    from core.config import load_settings
    from core.services import Services

    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", extractor)
    svc = Services(load_settings(), embedder=embedder, clock=clock)
    try:
        capture(svc, "Souviens-toi que le bail de la rue Dumenge commence le 15 mai")
        lite.enqueue("fake-lite", json.dumps({"candidates": []}))

        await learn_archive(svc)

        [proposal] = proposals(svc)
        assert proposal.status == "approved" and proposal.authority == "operator"
        assert svc.memory.require(proposal.memory_id).canonical_text.startswith("Le bail")
    finally:
        svc.close()
