"""Forget means every copy (README, Forget): `forget --matching` finds a phrase, case and accents
aside, in every store and file Elora wrote, previews it, and erases it so that no
12-character piece of it is left on disk under ELORA_HOME."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta

import pytest

from core.archive.records import CaptureIn
from core.council.skills import forge_skill
from core.errors import InvalidInput
from core.memory.api import save_memory
from core.memory.forget import forget_entry, forget_matching, preview
from core.memory.matching import Phrase, fold_for_match
from core.memory.mirror import export_markdown
from core.recall.archive_search import search_archive
from core.recall.pack import build_pack
from core.recall.tokens import count_tokens
from tests.core.memory.helpers import (
    as_stored,
    database_name,
    entry,
    fts_terms,
    is_database,
    message,
    source_of,
    windows_on_disk,
)

SECRET = "Ma grand-mère Hortense cache la clé du coffre sous l'érable : code 8841-QUETZAL"
# How the operator types it: other case, no accents, a typographic apostrophe.
PHRASE = "GRAND-MERE HORTENSE CACHE LA CLE DU COFFRE SOUS L’ERABLE"
START = datetime(2024, 5, 2, 18, 0)


def _rows(services, sql: str, *params):
    return services.db.rows(sql, params)


@pytest.fixture
def stocked(services, home):
    """A home where the secret was said, echoed, learned, distilled, mirrored and spooled."""
    said = [
        message("1", "Bonjour ! Tu vas bien ?", START, chat_id="77", sender="Léa"),
        message("2", f"Au fait : {SECRET}. Ne le dis à personne.", START + timedelta(minutes=1),
                chat_id="77", sender="Camille"),
        message("3", "Et le vélo est place B12, au sous-sol.", START + timedelta(minutes=2),
                chat_id="77", sender="Camille"),
        message("8", f"Rappel — {SECRET.upper()}", START + timedelta(days=3), chat_id="99"),
        message("9", "Le cadenas du vélo : 5820-LYNX", START + timedelta(days=4), chat_id="99"),
    ]  # fmt: skip
    question = message("q1", "Où est la clé de mamie ?", START + timedelta(days=5), chat_id="cli")
    echo = CaptureIn(surface="telegram", chat_id="cli", message_id="r1", sender="Elora",
                     role="assistant", text=f"Tu m'as dit : « {SECRET} »",
                     sent_at=START + timedelta(days=5, seconds=5))  # fmt: skip
    services.archive.store_batch([*said, question, echo])
    services.archive.index_pending()
    window = services.window("telegram", "cli", "7")
    window.append("user", question.text, question.id)
    window.append("assistant", echo.text, echo.id)

    save_memory(services, entry("fact.coffre", SECRET, sources=[source_of(said[1])]))
    save_memory(services, entry("fact.tresor", "Le trésor est à la campagne",
                                sources=[source_of(said[3])]))  # fmt: skip
    save_memory(services, entry("fact.velo", "Le vélo est rangé place B12",
                                sources=[source_of(said[2]), source_of(said[1])]))  # fmt: skip
    proposals = services.proposals
    proposals.create(text=f"Camille : {SECRET}", kind="fact", tier="semantic", candidate={})
    proposals.create(text="Mamie a un coffre", kind="fact", tier="semantic", candidate={},
                     source_capture_ids=[said[1].id])  # fmt: skip
    proposals.create(text="Camille a un vélo", kind="fact", tier="semantic", candidate={},
                     source_capture_ids=[said[2].id])  # fmt: skip

    filler = " ".join(f"Clause {n} du bail, sans rapport." for n in range(60))
    services.session_memory.save("7", "42", "doc:bail", f"{filler} {SECRET} {filler}")
    services.session_memory.save("7", "42", "doc:autre", filler)
    services.traces.record(
        surface="telegram", chat_id="77", capture_id=said[1].id,
        classification={"intent": "task", "reasons": ["mentions hortense, quetzal"]},
        pack={"items": ["fact.coffre", "fact.velo"],
              "missing": ["no maintained memory about: coffre, erable, hortense, quetzal"]},
        learning={"proposals": [], "rule": None},
    )  # fmt: skip
    services.spool.append(message("s1", f"(spooled) {SECRET}", START, chat_id="77"), "locked")
    services.spool.append(message("s2", "(spooled) rien à voir", START, chat_id="77"), "locked")
    export_markdown(services, services.settings.mirror_dir)
    export_markdown(services, home / "exports" / "snapshot")
    forge_skill(services, "coffre", "Coffre", f"Sait que {SECRET}", "Répondre en une phrase, "
                "avec précision et sans détour.")  # fmt: skip
    (home / "notes.txt").write_text(f"Mes notes : {SECRET}\n", encoding="utf-8")
    return {"said": said, "question": question, "echo": echo}


def test_the_phrase_is_matched_without_case_accents_or_typographic_variants():
    phrase = Phrase(PHRASE)

    assert phrase.in_text(f"xx {SECRET} yy")
    assert phrase.in_text(SECRET.upper().replace("'", "’"))
    assert phrase.in_json({"a": [{"b": f"…{SECRET}"}]})
    assert not phrase.in_text("Ma grand-mère Hortense cache la clé du garage")
    assert fold_for_match("Élodie  a\tdit\n« oui »") == 'elodie a dit " oui "'


def test_a_phrase_too_short_to_be_safe_is_refused(services):
    with pytest.raises(InvalidInput, match="at least"):
        forget_matching(services, " le ")


def test_the_preview_lists_every_copy_and_erases_nothing(services, home, stocked):
    said, echo = stocked["said"], stocked["echo"]
    before = windows_on_disk(home, SECRET)

    plan = preview(services, phrase=PHRASE)

    # What waited in the spool was archived first (a replay racing the scan would hide it).
    assert services.spool.backlog() == 0
    spooled = {m.capture_id for m in plan.messages} - {said[1].id, said[3].id, echo.id}
    assert len(plan.messages) == 4 and len(spooled) == 1
    [(text,)] = services.db.rows("SELECT text FROM captures WHERE id = ?", (spooled.pop(),))
    assert text == f"(spooled) {SECRET}"
    assert {(m.chat_id, m.sent_at) for m in plan.messages} >= {("77", "2024-05-02 18:01")}
    assert {(e.memory_id, e.why) for e in plan.entries} == {
        ("fact.coffre", "contains"),
        ("fact.tresor", "derived"),
    }
    assert len(plan.proposals) == 2  # the one holding it, the one drawn from an erased message
    assert [s.source_id for s in plan.sessions] == ["doc:bail"]
    assert len(plan.threads) == 1 and "1 turn" in plan.threads[0].what
    assert len(plan.traces) == 1
    actions = {f.relative: f.action for f in plan.files}
    assert actions["notes.txt"] == "left"
    assert actions["skills/coffre/SKILL.md"] == "delete"
    assert not [p for p in actions if p.startswith("spool/")]
    mirrored = [p for p, a in actions.items() if a == "delete" and p.endswith("fact.coffre.md")]
    assert len(mirrored) == 2  # the scheduled mirror and the export written inside the home
    assert SECRET.lower() not in json.dumps(plan.to_json(), ensure_ascii=False).lower()
    after = windows_on_disk(home, SECRET)  # a preview erases nothing (the spool moved in)
    assert _held(before) == _held(after)


def _held(windows: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Where pieces of a secret are held, the spool left out, and the database's log and main
    file as one: SQLite's checkpoint (a thread of the process) moves pages from the one to the
    other whenever it runs."""
    return {
        (name.removesuffix("-wal"), piece)
        for name, piece in windows
        if not name.startswith("spool/")
    }


def test_forget_matching_leaves_no_piece_of_the_phrase_in_any_file_elora_wrote(
    services, home, stocked
):
    before = {f for f, _ in windows_on_disk(home, SECRET)}
    assert {"notes.txt", "skills/coffre/SKILL.md"} <= before  # the search finds copies
    assert any(is_database(f) for f in before) and any("mirror" in f for f in before)

    report = forget_matching(services, PHRASE)

    # Two said, one echo, and the spooled one (replayed into the database first, then erased).
    assert report.removed_captures == 4
    assert sorted(report.removed_entries) == ["fact.coffre", "fact.tresor"]
    assert report.left_files == ["notes.txt"]
    assert report.wal_truncated and report.vectors_erased
    leftovers = {f for f, _ in windows_on_disk(home, SECRET)}
    assert leftovers == {"notes.txt"}, windows_on_disk(home, SECRET)
    assert not fts_terms(home / "elora.db", {"quetzal", "hortense", "erable", "8841"})


def test_no_count_kept_in_memory_holds_an_erased_text_as_its_key(services, stocked):
    build_pack(services, "Où est la clé du coffre de mamie Hortense ?")  # weighs the secret
    assert count_tokens.cache_info().currsize > 0

    forget_matching(services, PHRASE)

    assert count_tokens.cache_info().currsize == 0


def test_what_did_not_hold_the_phrase_stays_and_stays_findable(services, home, stocked):
    said, question = stocked["said"], stocked["question"]

    forget_matching(services, PHRASE)

    assert services.memory.get("fact.velo") is not None  # another source of it remains
    assert services.memory.get("fact.velo").sources == [source_of(said[2]), source_of(said[1])]
    assert [p.text for p in services.proposals.list(limit=10)] == ["Camille a un vélo"]
    hits = search_archive(services, "où est rangé le vélo au sous-sol ?", None, limit=5)
    window = next(h for h in hits if "place B12" in h.text)
    assert window.message_ids == ["1", "3"]  # the window, rewritten without message 2
    assert "hortense" not in " ".join(h.text for h in hits).lower()
    turns = services.window("telegram", "cli").turns()
    assert [(t["role"], t["capture_id"]) for t in turns] == [("user", question.id)]
    assert services.session_memory.sources("7", "42") == ["doc:autre"]
    # The spool was replayed before the erase: the unrelated message is archived, the other gone.
    assert services.spool.backlog() == 0
    assert [t for (t,) in services.db.rows("SELECT text FROM captures WHERE chat_id = '77'")
            if t.startswith("(spooled)")] == ["(spooled) rien à voir"]  # fmt: skip
    (trace,) = services.traces.recent(5)
    assert trace.pack["missing"] == [] and trace.classification["reasons"] == []
    assert trace.pack["items"] == ["[forgotten]", "fact.velo"]
    assert trace.classification["intent"] == "task"  # what is not text stays for the audit


def test_vectors_follow_sqlite_and_chroma_holds_no_text(services, stocked):
    forget_matching(services, PHRASE)

    chunks = {r[0] for r in _rows(services, "SELECT id FROM chunks")}
    archive = services.vectors.collection("archive").get(include=["documents", "metadatas"])
    assert set(archive["ids"]) == chunks
    entries = {r[0] for r in _rows(services, "SELECT uuid FROM memory_entries")}
    memory = services.vectors.collection("memory").get(include=["documents", "metadatas"])
    assert set(memory["ids"]) == entries
    session = {r[0] for r in _rows(services, "SELECT id FROM session_chunks")}
    ephemeral = services.vectors.collection("ephemeral").get(include=["documents", "metadatas"])
    assert set(ephemeral["ids"]) == session
    allowed = {
        "archive": {"chat_id", "surface", "kind", "first_at"},
        "memory": {"tier", "kind", "scope", "status", "importance", "valid_from"},
        "ephemeral": {"user_id", "chat_id", "source_id", "expires_at"},
    }
    for name, got in (("archive", archive), ("memory", memory), ("ephemeral", ephemeral)):
        assert all(doc is None for doc in got["documents"]), name
        assert all(set(meta) <= allowed[name] for meta in got["metadatas"]), name


def test_the_forget_log_says_a_phrase_was_forgotten_never_which(services, stocked, clock):
    forget_matching(services, PHRASE)

    (row,) = _rows(services, "SELECT entry_uuid, matching, removed_captures, removed_entries, "
                   "with_sources FROM forget_log")  # fmt: skip
    assert tuple(row) == ("", 1, 4, 2, 0)  # 3 archived + 1 replayed from the spool


def test_forget_with_sources_also_erases_messages_holding_the_entry_text_verbatim(services, home):
    said = [
        message("1", "Mon badge du parking : 3141-IBIS", START),
        message("2", "Je répète : mon badge du parking : 3141-IBIS !", START + timedelta(hours=5)),
        message("3", "Le parking ferme à minuit", START + timedelta(hours=6)),
    ]
    services.archive.store_batch(said)
    services.archive.index_pending()
    save_memory(services, entry("fact.badge", "mon badge du parking : 3141-IBIS",
                                sources=[source_of(said[0])]))  # fmt: skip

    plan = preview(services, memory_id="fact.badge", with_sources=True)
    report = forget_entry(services, "fact.badge", with_sources=True)

    assert {(m.capture_id, m.why) for m in plan.messages} == {
        (said[0].id, "source"),
        (said[1].id, "contains"),
    }
    assert report.removed_captures == 2
    assert windows_on_disk(home, "badge du parking : 3141-IBIS") == []
    assert [r[0] for r in _rows(services, "SELECT message_id FROM captures")] == ["3"]


def test_forget_without_sources_keeps_messages_but_drops_proposals_with_the_text(services, home):
    said = message("1", "Mon badge du parking : 3141-IBIS", START)
    services.archive.capture(said)
    save_memory(services, entry("fact.badge", "Badge du parking : 3141-IBIS"))
    services.proposals.create(text="Badge du parking : 3141-IBIS", kind="fact", tier="semantic",
                              candidate={})  # fmt: skip

    report = forget_entry(services, "fact.badge")

    assert (report.removed_captures, report.removed_proposals) == (0, 1)
    assert services.proposals.list(limit=5) == []
    stored = {as_stored(f) for f, _ in windows_on_disk(home, "Badge du parking : 3141-IBIS")}
    assert stored == {database_name()}
    assert services.archive.counts()["captures"] == 1  # the archive is only erased when asked


def test_a_phrase_cut_across_two_session_chunks_is_found(services):
    # Longer than the chunks' overlap, so that no chunk holds all of it.
    long = f"{SECRET}, et le double est chez le notaire de Lyon, rue Mercière, " * 3
    services.session_memory.save("7", "42", "doc:long", "a" * 700 + " " + long + " fin")
    chunks = [r[0] for r in _rows(services, "SELECT text FROM session_chunks ORDER BY position")]
    assert len(chunks) == 2 and not any(long.strip() in c for c in chunks)

    plan = preview(services, phrase=long)

    assert [s.source_id for s in plan.sessions] == ["doc:long"]


@pytest.mark.skipif(
    bool(os.environ.get("ELORA_TEST_CHROMA_URL")),
    reason="the embedded index's files: a Chroma server keeps its own, elsewhere",
)
def test_leftovers_of_an_erased_message_in_the_vector_index_files_are_zeroed(services, home):
    # The embedded index persists capacity it has not used yet, holding whatever the process
    # freed there: put such a leftover (a piece of the message) in its largest file.
    said = message("1", "Le digicode de la cave est 5521-GRENAT, côté cour", START)
    services.archive.store_batch([said])
    services.archive.index_pending()
    files = sorted((home / "chroma").rglob("*.bin"), key=lambda p: p.stat().st_size)
    assert files, "the index wrote no binary file"
    target = files[-1]
    size = target.stat().st_size
    leftover = b"\x00\x17 digicode de la cave est 5521-GRENAT, c\xc3\xb4t\xc3\xa9 co\x01"
    with open(target, "r+b") as fh:
        fh.seek(size - len(leftover) - 8)
        fh.write(leftover)

    forget_matching(services, "5521-GRENAT")

    assert windows_on_disk(home, said.text) == []
    assert target.stat().st_size == size  # zeroed in place, the layout kept
