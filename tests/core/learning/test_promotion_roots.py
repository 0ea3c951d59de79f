"""Promotions keep their roots: an approved promotion links to each entry it was promoted from
(`promoted-from`), rests on the union of their messages, and shows them in the pack (`roots`)
and in the cockpit."""

from __future__ import annotations

import json
from datetime import datetime

from core.cli.main import main
from core.learning.promotion import promote
from core.memory.schema import PROMOTED_FROM
from tests.core.learning.support import capture, entry, proposals

CLIMBING = [
    "J'ai fait du bloc à Climb Up Gerland après le travail",
    "Bloc à Climb Up Gerland avec Julien ce soir",
    "Encore du bloc à Climb Up Gerland mardi soir",
]


def _episodes(services) -> list:
    """Three episodic entries, each drawn from its own archived message."""
    saved = []
    for n, text in enumerate(CLIMBING):
        when = datetime(2025, 3, 4 + 7 * n, 19, 0)
        source = capture(services, text, when)
        saved.append(services.memory.save(entry(
            f"event.bloc-{n}", f"Camille a fait du bloc à Climb Up Gerland ({when:%d/%m})",
            kind="event", valid_from=when, topics=["sport", "escalade"],
            attributes={"event_type": "climbing"}, sources=services.archive.sources([source]),
        )))  # fmt: skip
    return saved


async def test_an_approved_promotion_links_to_its_roots_and_rests_on_their_messages(
    services, capsys
):
    roots = _episodes(services)
    assert (await promote(services))["episodic_to_semantic"] == 1
    [proposal] = [p for p in proposals(services) if p.origin == "promotion"]

    assert main(["proposals", "approve", proposal.id]) == 0

    pattern = services.memory.require(services.proposals.get(proposal.id).memory_id)
    links = services.memory.links_of([pattern.uuid])
    assert sorted((link.relation, link.to_uuid) for link in links) == sorted(
        (PROMOTED_FROM, r.uuid) for r in roots
    )
    assert [s["capture_id"] for s in pattern.sources] == [r.sources[0]["capture_id"] for r in roots]
    assert all(s["message_id"] for s in pattern.sources)
    capsys.readouterr()

    assert main(["context", "Est-ce que Camille fait de l'escalade à Gerland ?", "--json"]) == 0

    pack = json.loads(capsys.readouterr().out)
    items = {i["id"]: i for layer in pack["layers"].values() for i in layer["items"]}
    item = items[pattern.memory_id]
    assert sorted(r["id"] for r in item["roots"]) == [r.memory_id for r in roots]
    assert {(r["relation"], r["tier"], r["status"]) for r in item["roots"]} == {
        (PROMOTED_FROM, "episodic", "active")
    }
    assert item["roots"][0]["date"].startswith("2025-03")
    assert len(item["sources"]) == 3


async def test_a_promotion_to_a_rule_keeps_its_semantic_root(services):
    source = capture(services, "Le standup Atlas est à 9h45 tous les jours")
    fact = services.memory.save(entry(
        "fact.standup", "Le standup Atlas est à 9h45 chaque jour ouvré", observations=5,
        confidence=0.95, topics=["atlas"], sources=services.archive.sources([source]),
    ))  # fmt: skip
    await promote(services)
    [proposal] = [p for p in proposals(services) if p.origin == "promotion"]

    from core.learning.review import approve

    rule = approve(services, proposal.id)

    assert rule.tier == "procedural"
    [link] = services.memory.links_of([rule.uuid])
    assert (link.relation, link.to_uuid) == (PROMOTED_FROM, fact.uuid)
    assert rule.sources == fact.sources
