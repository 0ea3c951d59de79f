"""A forget's undo: held in the memory of the process that made it, never on disk, for
ELORA_UNDO_MINUTES; it puts back the entry with its links, versions, proposals, vector and
learning consent, and lifts the tombstone the forget laid."""

from __future__ import annotations

import pytest

from core.errors import CannotUndo, NotFound
from core.jobs.registry import run_job
from core.memory.api import save_memory, search_memory
from core.memory.forget import forget_matching
from core.memory.tombstones import is_buried
from core.memory.unforget import forget
from core.memory.versions import history
from core.services import Services
from core.undo import log
from core.undo.context import acting
from core.undo.reverse import undo
from tests.core.memory.helpers import NOW, entry, files_containing, message, source_of

SECRET = "Mon code de casier est 4711-ZEBRA"


def _seed(services):
    """An entry drawn from a message, linked to another, with a pending proposal naming it and a
    trace that recalled it."""
    source = message("m1", "Au fait, " + SECRET, NOW)
    services.archive.capture(source)
    kept = save_memory(services, entry("fact.locker", SECRET, sources=[source_of(source)]))
    save_memory(services, entry("fact.locker", SECRET, observations=2, sources=[source_of(source)]))
    other = save_memory(services, entry("fact.gym", "La salle de sport ouvre à 6h"))
    services.memory.link(kept.uuid, other.uuid, "confirms")
    proposal = services.proposals.create(text="Le casier 4711-ZEBRA est au sous-sol", kind="fact",
                                         tier="semantic", candidate={}, memory_id="fact.locker")  # fmt: skip
    services.traces.record(surface="telegram", chat_id="42", pack={"items": ["fact.locker"]})
    return source, kept, other, proposal


def held_forget(services, memory_id="fact.locker", **options):
    with acting("cockpit", holds=True):
        return forget(services, memory_id, **options)


def test_a_held_forget_is_undone_with_everything_it_erased(services, home):
    source, kept, other, proposal = _seed(services)

    report, action = held_forget(services)

    assert action is not None and report.removed_entries == ["fact.locker"]
    assert services.memory.get("fact.locker") is None and is_buried(services, SECRET)

    done = undo(services, action.id)

    back = services.memory.require("fact.locker")
    assert done.restored == ["fact.locker"]
    assert (back.uuid, back.canonical_text, back.observations) == (kept.uuid, SECRET, 2)
    assert [(x.from_uuid, x.relation, x.to_uuid) for x in services.memory.links_of([kept.uuid])] \
        == [(kept.uuid, "confirms", other.uuid)]  # fmt: skip
    assert services.proposals.get(proposal.id).text == proposal.text
    assert [v.change for v in history(services, "fact.locker")] == [
        "create", "update", "forget undone"]  # fmt: skip
    assert [h["memory_id"] for h in search_memory(services, "code du casier")][:1] == [
        "fact.locker"]  # fmt: skip
    assert not is_buried(services, SECRET)
    consent = services.db.rows("SELECT consent FROM captures WHERE id = ?", (source.id,))
    assert consent == [(None,)]  # material for learning again, as before the forget
    trace = services.traces.recent(1)[0]
    assert trace.pack["items"] == ["fact.locker"]


def test_nothing_of_a_held_forget_is_on_disk(services, home):
    _seed(services)

    held_forget(services)

    services.db.checkpoint()
    # The archived message stays (it was not erased); nothing else holds the words.
    assert files_containing(home, "Le casier 4711-ZEBRA") == []
    row = services.db.rows("SELECT target, data, entry_uuids FROM undo_actions")
    assert len(row) == 1 and "4711" not in str(row) and "locker" not in str(row)


def test_another_process_cannot_undo_a_forget_and_says_why(services, settings, embedder, clock):
    _seed(services)
    _, action = held_forget(services)
    other = Services(settings, embedder=embedder, clock=clock)  # e.g. `elora undo` meanwhile
    try:
        with pytest.raises(CannotUndo, match="held in that process's memory and nothing of it "
                                             "is kept on disk"):  # fmt: skip
            undo(other, action.id)
    finally:
        other.close()
    assert services.memory.get("fact.locker") is None


async def test_a_held_forget_expires_and_is_let_go(services, clock):
    _seed(services)
    _, action = held_forget(services)
    clock.advance(minutes=30)

    outcome = await run_job(services, "purge-undo")

    assert (outcome["purged"], outcome["held_dropped"]) == (1, 1)
    assert len(services.held_forgets) == 0 and log.recent(services, include_closed=True) == []
    with pytest.raises(NotFound):
        undo(services, action.id)


def test_past_its_period_a_forget_is_not_undone(services, clock):
    _seed(services)
    _, action = held_forget(services)
    clock.advance(minutes=30)

    with pytest.raises(CannotUndo, match="ended"):
        undo(services, action.id)
    assert len(services.held_forgets) == 0  # let go of at once, job or not


def test_forgets_that_erase_messages_or_run_one_shot_are_not_undoable(services):
    _seed(services)
    save_memory(services, entry("fact.bike", "Le vélo est au garage Dupont"))

    _, with_messages = held_forget(services, with_sources=True)
    with acting("cli"):  # a one-shot command holds nothing
        _, one_shot = forget(services, "fact.bike")

    assert with_messages is None and one_shot is None
    assert len(services.held_forgets) == 0
    assert services.db.rows("SELECT count(*) FROM undo_actions WHERE kind = 'forget'") == [(0,)]


def test_a_forget_by_phrase_since_wins_over_the_undo(services):
    _seed(services)
    _, action = held_forget(services)
    save_memory(services, entry("fact.note", "Penser au code 4711-ZEBRA demain"))

    forget_matching(services, "4711-ZEBRA")

    with pytest.raises(CannotUndo, match="forget by phrase ran since"):
        undo(services, action.id)
    assert services.memory.get("fact.locker") is None


def test_a_memory_saved_again_since_blocks_the_undo(services):
    _seed(services)
    _, action = held_forget(services)
    save_memory(services, entry("fact.locker", "Le casier est le numéro 12"))

    with pytest.raises(CannotUndo, match="saved since"):
        undo(services, action.id)
    assert services.memory.require("fact.locker").canonical_text == "Le casier est le numéro 12"


def test_an_approved_proposal_to_forget_is_undone_back_to_the_queue(services, clock):
    from core.learning import review
    from core.learning.proposals import being_decided

    kept = save_memory(services, entry("fact.gym", "La salle de sport ouvre à 6h"))
    proposal = services.proposals.create(
        text=kept.canonical_text, kind="fact", tier="semantic", memory_id="fact.gym",
        candidate={"action": "forget"}, conflict_uuid=kept.uuid, conflict_relation="forget",
    )  # fmt: skip
    with acting("cockpit", holds=True) as who:
        gone = review.approve(services, proposal.id)
    assert gone.status == "forgotten" and services.memory.get("fact.gym") is None

    undo(services, who.last_action)

    back = services.proposals.get(proposal.id)
    assert back.status == "pending" and not being_decided(back, clock.now())
    assert services.memory.require("fact.gym").canonical_text == "La salle de sport ouvre à 6h"
