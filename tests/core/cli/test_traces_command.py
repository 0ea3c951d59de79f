"""`elora traces`: recent requests with their cost and models written as the escalation path."""

from __future__ import annotations

import json

from core.cli.main import main

CLASSIFIER = {"tier": "LITE", "model": "openai/fake-lite", "tokens_in": 30, "tokens_out": 5,
              "cost": 0.0001, "latency_ms": 50}  # fmt: skip
FLASH = {"tier": "FLASH", "model": "openai/fake-flash", "tokens_in": 400, "tokens_out": 80,
         "cost": 0.009, "latency_ms": 900}  # fmt: skip
LITE = {**CLASSIFIER, "tokens_in": 50}


def test_traces_list_the_escalation_path_and_the_cost(services, capsys, monkeypatch):
    record = services.traces.record
    # Started at FLASH (the gate raised it): the classifier's LITE call is no step of the path.
    record(id="t-gate", surface="telegram", models=[CLASSIFIER, FLASH, CLASSIFIER],
           pack={"start_tier": "FLASH"}, cost=0.0092, classification={"intent": "task"})  # fmt: skip
    record(id="t-esc", surface="cli", models=[CLASSIFIER, LITE, FLASH], cost=0.0092,
           pack={"start_tier": "LITE"},
           escalations=[{"from": "LITE", "to": "FLASH", "plan_chars": 80}])  # fmt: skip
    record(id="t-fail", surface="telegram", error="provider_error")

    assert main(["traces", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}

    assert rows["t-gate"]["models"] == "FLASH" and rows["t-gate"]["cost"] == 0.0092
    assert rows["t-esc"]["models"] == "LITE→FLASH" and rows["t-esc"]["escalations"] == 1
    assert (rows["t-fail"]["models"], rows["t-fail"]["cost"]) == ("-", None)
    monkeypatch.setenv("COLUMNS", "160")  # a wide terminal: no cell folded
    assert main(["traces"]) == 0
    out = capsys.readouterr().out
    assert "LITE→FLASH" in out and "0.00920" in out and "cost" in out
