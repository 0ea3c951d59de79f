"""With a model configured, facts read in archived conversations become keys of their messages
(LITE, batched, resumable, consent-aware), through the real LiteLLM client and the fake server."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

from core.archive.fact_keys import extract_fact_keys
from core.recall.pack import build_pack
from tests.core.memory.helpers import message

DAY = datetime(2024, 6, 1, 18, 0)
FACT = "Melanie takes her kids to the swimming pool every Saturday"


def _archive(services) -> None:
    services.archive.store_batch(
        [
            message("1", "Any plans for the weekend?", DAY, sender="Caroline"),
            message("2", "Off to the pool with the kids as usual, they love it!", DAY + timedelta(seconds=20), sender="Melanie"),
            message("3", "Don't remember this: my PIN is 4711", DAY + timedelta(seconds=40), sender="Melanie"),
            message("9", "The weather was awful all week", DAY + timedelta(days=9), sender="Caroline"),
        ]
    )  # fmt: skip
    services.archive.index_pending()


def _ids(pack) -> list[str]:
    return [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]


def test_facts_become_keys_of_their_message_and_are_read_once(make_services, llm):
    services = make_services()
    _archive(services)
    reply = {"facts": [{"message": "w1m2", "fact": FACT}, {"message": "w9m9", "fact": "lost"}]}
    llm.answer_when("Conversation w1", json.dumps(reply))

    outcome = asyncio.run(extract_fact_keys(services, services.llm))

    assert outcome["facts"] == 1 and outcome["failure"] is None
    sent = json.dumps([r["messages"] for r in llm.requests], ensure_ascii=False)
    assert "Off to the pool" in sent
    assert "4711" not in sent  # "don't remember this" is never sent to a model
    with services.db.session() as session:
        keys = dict(
            session.connection()
            .exec_driver_sql(
                "SELECT c.message_id, k.keys FROM turn_keys k JOIN captures c "
                "ON c.rowid = k.capture_rowid"
            )
            .all()
        )
    assert FACT in keys["2"]
    pack = build_pack(services, "Who goes swimming every Saturday?")
    assert _ids(pack)[0] == "2"  # found through its fact: its own words say "pool"
    calls = len(llm.requests)
    again = asyncio.run(extract_fact_keys(services, services.llm))
    assert again == {"calls": 0, "messages": 0, "facts": 0, "failure": None}
    assert len(llm.requests) == calls  # resumable: nothing is read twice


def test_a_reply_out_of_schema_stops_and_the_next_run_resumes(make_services, llm):
    services = make_services()
    _archive(services)
    llm.answer_when("Conversation w1", "I found some facts!")

    failed = asyncio.run(extract_fact_keys(services, services.llm))

    assert failed["messages"] == 0 and "rejected" in failed["failure"]
    llm.answer_when("Conversation w1", json.dumps({"facts": [{"message": "w1m2", "fact": FACT}]}))
    resumed = asyncio.run(extract_fact_keys(services, services.llm))
    assert resumed["facts"] == 1 and resumed["messages"] == 4
