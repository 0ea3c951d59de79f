"""The shipped example, walked as a user would: `elora import`, `elora learn`, the jobs, then
approving what Elora recommends — the audit then shows an environment tier that filled and
fading figures, and the pack recalls predictions for the task they are about.

The clock `elora` reads is pinned to the Monday after the story ends (its messages run from
January to July 2024), then moved on so entries age: fading needs time to pass.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "examples" / "telegram" / "result.json"
AFTER_THE_STORY = datetime(2024, 7, 22, 9, 0)


@pytest.fixture
def pinned(monkeypatch):
    """The clock of every `elora` command run in this process, pinned and movable."""
    from core.clock import SystemClock

    moment = {"now": AFTER_THE_STORY}
    monkeypatch.setattr(SystemClock, "now", lambda self: moment["now"])
    return moment


def elora(capsys, *argv: str):
    """Run one command; its JSON output (or None), failing loudly on a non-zero exit."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, f"elora {' '.join(argv)} exited {code}: {err}"
    return json.loads(out) if "--json" in argv else None


def test_the_example_fills_the_environment_tier_and_its_episodes_fade(home, pinned, capsys):
    elora(capsys, "import", str(EXAMPLE))
    learned = elora(capsys, "learn", "--json")
    assert learned["messages"] > 250 and learned["failures"] == 0
    observed = elora(capsys, "jobs", "run", "environment", "--json")
    for job in ("promotion", "reflexion", "fade"):
        elora(capsys, "jobs", "run", job, "--json")

    assert observed["from_messages"] >= 6
    assert set(observed["by_bucket"]) >= {"documents", "places", "services", "tools"}
    queued = elora(capsys, "proposals", "--json")
    environment = [p for p in queued if p["tier"] == "environment"]
    assert len(environment) == observed["proposed"]
    for p in environment:  # each with a sub-bucket, a prediction and its messages
        assert p["candidate"]["bucket"] and p["candidate"]["prediction"]
        assert p["source_capture_ids"]
    pdfs = next(p for p in environment if p["candidate"]["bucket"] == "documents")
    assert len(pdfs["source_capture_ids"]) == 2  # Karim in February, Tom in May
    assert pdfs["status"] == "recommended"

    elora(capsys, "proposals", "approve", "--recommended")
    report = elora(capsys, "audit", "--json")

    assert "environment" not in report["empty_tiers"]
    assert report["tiers"]["environment"]["active"] == report["environment"]["predictions"] >= 4
    assert set(report["environment"]["by_bucket"]) >= {"documents", "places", "services", "tools"}
    assert report["environment"]["with_prediction"] == report["environment"]["predictions"]
    predictions = elora(capsys, "memories", "--tier", "environment", "--json")
    assert all(e["attributes"]["prediction"] and e["sources"] for e in predictions)

    # A task about Nordhaven's PDFs gets the prediction, labelled as one, with its evidence.
    pack = elora(capsys, "context", "Extrais les chiffres du PDF envoyé par Nordhaven", "--json")
    items = [i for layer in pack["layers"].values() for i in layer["items"]]
    prediction = next(i for i in items if i["tier"] == "environment")  # the surest first
    assert prediction["tier_meaning"] == "prediction" and prediction["bucket"] == "documents"
    assert all(i["reason"].startswith("prediction about") for i in items
               if i["tier"] == "environment")  # only those the task names  # fmt: skip
    assert {s["speaker"] for s in prediction["sources"]} == {"Karim Haddad", "Tom Becker"}

    # Months later, the episodes nobody recalled or confirmed are due, then fade.
    episodes = elora(capsys, "memories", "--tier", "episodic", "--json")
    assert episodes and all(e["importance"] <= 3 for e in episodes)
    pinned["now"] = AFTER_THE_STORY + timedelta(days=110)
    due = elora(capsys, "audit", "--json")["fading"]
    assert due["due_soon"] == len(episodes) and due["faded"] == 0
    assert all("120 days from 2024-07-22" in n["reason"] for n in due["next"])

    pinned["now"] = AFTER_THE_STORY + timedelta(days=121)
    faded = elora(capsys, "jobs", "run", "fade", "--json")
    assert sorted(faded["faded_ids"]) == sorted(e["memory_id"] for e in episodes)
    assert elora(capsys, "memories", "--tier", "episodic", "--json") == []
    kept = elora(capsys, "memories", "--status", "faded", "--json")
    assert sorted(e["canonical_text"] for e in kept) == sorted(
        e["canonical_text"] for e in episodes
    )  # nothing deleted

    elora(capsys, "memories", "restore", episodes[0]["memory_id"])
    figures = elora(capsys, "audit", "--json")["fading"]

    assert (figures["faded"], figures["faded_7d"], figures["restored_7d"]) == (
        len(episodes) - 1, len(episodes) - 1, 1)  # fmt: skip
    assert [e["memory_id"] for e in elora(capsys, "memories", "--tier", "episodic", "--json")] == [
        episodes[0]["memory_id"]
    ]
