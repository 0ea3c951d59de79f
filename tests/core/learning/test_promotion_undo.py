"""Undoing an approved promotion takes its roots' links back with the entry, and the
promotion returns to the queue as it was; the episodic roots stay as they were."""

from __future__ import annotations

from core.learning.promotion import promote
from core.learning.review import approve
from core.memory.schema import PROMOTED_FROM
from core.undo.context import acting
from core.undo.reverse import undo
from tests.core.learning.support import proposals
from tests.core.learning.test_promotion_roots import _episodes


async def test_undoing_a_promotion_removes_the_entry_and_its_root_links(services):
    roots = _episodes(services)
    assert (await promote(services))["episodic_to_semantic"] == 1
    [proposal] = [p for p in proposals(services) if p.origin == "promotion"]
    queued = proposal.status
    with acting("cli"):
        pattern = approve(services, proposal.id)
    assert {link.relation for link in services.memory.links_of([pattern.uuid])} == {PROMOTED_FROM}

    done = undo(services)

    assert done.removed == [pattern.memory_id] and done.reopened == [proposal.id]
    assert services.memory.get(pattern.memory_id) is None
    assert services.memory.links_of([r.uuid for r in roots]) == []
    assert services.proposals.get(proposal.id).status == queued != "approved"  # as it was
    assert [services.memory.require(r.memory_id).status for r in roots] == ["active"] * 3
