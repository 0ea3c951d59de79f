"""What every pack reads whatever its question (L0's axioms, L1's manifest) is kept between
packs while the memory is unchanged, and read again as soon as anything changes it, from this
process or another one (core/memory/standing.py)."""

from sqlalchemy import event

from core.memory.api import save_memory
from core.recall.pack import build_pack
from core.services import Services
from tests.core.memory.helpers import entry

ESSENTIAL = "Write a haiku about autumn"  # L0 and L1 only


def _entry_reads(services) -> list[str]:
    """The statements reading memory entries or links, from now on."""
    seen: list[str] = []

    @event.listens_for(services.db.engine, "before_cursor_execute")
    def _seen(_conn, _cursor, statement, *_args):
        if "FROM memory_entries" in statement or "FROM entry_links" in statement:
            seen.append(statement)

    return seen


def _layer_ids(pack, name: str) -> list[str]:
    return [item["id"] for item in pack.layers[name].items]


def _texts(pack) -> dict[str, str]:
    return {item["id"]: item["text"] for item in pack.items()}


def test_what_every_pack_reads_is_kept_until_any_process_changes_the_memory(
    services, settings, embedder, clock
):
    axiom = save_memory(
        services, entry("pref.short", "Réponses courtes", kind="preference", importance=5)
    )
    save_memory(services, entry("fact.car", "Ma voiture est une Zoé", importance=3))
    first = build_pack(services, ESSENTIAL)
    assert _layer_ids(first, "L0") == ["pref.short"]
    assert _layer_ids(first, "L1") == ["fact.car"]

    reads = _entry_reads(services)
    again = build_pack(services, ESSENTIAL)
    assert _texts(again) == _texts(first)
    sqlite = services.db.dialect == "sqlite"
    # On SQLite nothing is read again; PostgreSQL has no stamp and reads every time.
    assert (reads == []) is sqlite

    # Another process (its own connections) changes an entry, links two, then removes one.
    other = Services(settings, embedder=embedder, clock=clock)
    try:
        save_memory(other, entry("fact.car", "Ma voiture est une Megane", importance=3))
        assert _texts(build_pack(services, ESSENTIAL))["fact.car"] == "Ma voiture est une Megane"

        bike = save_memory(other, entry("fact.bike", "Mon vélo est rouge", importance=2))
        other.memory.link(bike.uuid, axiom.uuid, "contradicts")
        linked = {i["id"]: i for i in build_pack(services, ESSENTIAL).items()}
        assert [c["id"] for c in linked["pref.short"]["contradictions"]] == ["fact.bike"]
        assert [c["id"] for c in linked["fact.bike"]["contradictions"]] == ["pref.short"]

        reads.clear()
        other.db.execute("DELETE FROM memory_entries WHERE memory_id = ?", ("fact.car",))
        assert "fact.car" not in _texts(build_pack(services, ESSENTIAL))
        assert reads  # read again after the change...
    finally:
        other.close()

    reads.clear()
    build_pack(services, ESSENTIAL)
    assert (reads == []) is sqlite  # ... and kept again once nothing moves


def test_each_reader_sees_only_the_kept_entries_meant_for_them(services):
    save_memory(
        services,
        entry("pref.mine", "Me tutoyer", kind="preference", importance=5, scope="user:42"),
    )
    save_memory(
        services,
        entry("pref.theirs", "Me vouvoyer", kind="preference", importance=5, scope="user:7"),
    )

    mine = build_pack(services, ESSENTIAL, user_id="42")
    theirs = build_pack(services, ESSENTIAL, user_id="7")
    mine_again = build_pack(services, ESSENTIAL, user_id="42")

    assert _layer_ids(mine, "L0") == _layer_ids(mine_again, "L0") == ["pref.mine"]
    assert _layer_ids(theirs, "L0") == ["pref.theirs"]
