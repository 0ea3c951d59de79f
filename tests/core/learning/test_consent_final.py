"""Consent is final (README, Learning): a message under a consent instruction is material for no job
(extraction, reflexion, promotion, `elora learn`, the Markdown mirror, the model's tools), and a
forgotten entry leaves a tombstone — a keyed hash, never the text — so nothing proposes it again."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from core.cli.main import main
from core.jobs.registry import run_job
from core.learning.backfill import learn_archive
from core.learning.review import OPEN, approve, approve_recommended
from core.memory.forget import forget_entry
from core.memory.mirror import export_markdown, import_markdown
from tests.core.learning.support import NOW, ask, capture, entry, proposals
from tests.llm_server import Reply, tool

VIOLONCELLE = "Ne retiens pas ça : je joue du violoncelle le mardi soir."


@pytest.fixture
def chat(make_services):
    """Services whose models are the fake server (it answers "ok"); heuristic extraction."""
    return make_services()


async def converse(services, *texts: str, chat_id: str = "c1") -> None:
    """Operator turns through the real pipeline, each answered by the assistant."""
    for text in texts:
        assert (await ask(services, text, chat_id=chat_id)).status == "answered"


def mentioning(services, word: str) -> list:
    """Every proposal, whatever its status, whose text holds the word."""
    return [p for p in proposals(services) if word in p.text.lower()]


def files_holding(root: Path, needle: str) -> list[Path]:
    """Files under root whose bytes contain the text."""
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


async def test_the_violoncelle_message_never_becomes_a_lesson_even_after_a_forget(chat):
    await converse(chat, "Quel est mon programme cette semaine ?", VIOLONCELLE)

    first = await run_job(chat, "reflexion")
    proposed_first = mentioning(chat, "violoncelle")
    for lesson in proposed_first:  # what the operator did with the lesson the old code proposed
        forget_entry(chat, approve(chat, lesson.id).memory_id)
    second = await run_job(chat, "reflexion")

    assert proposed_first == [] and first["lessons_proposed"] == 0
    assert mentioning(chat, "violoncelle") == [] and second["lessons_proposed"] == 0
    assert first["withheld_by_consent"] == 0  # filtered in SQL: the message is never even read
    assert first["turns_read"] == 1


async def test_a_real_correction_teaches_a_lesson_that_stays_forgotten(chat):
    await converse(chat, "Quand est la répétition ?", "Non, c'est faux : la répétition est jeudi.")

    first = await run_job(chat, "reflexion")
    [lesson] = mentioning(chat, "répétition")
    assert first["corrections"] == 1 and lesson.origin == "reflexion"
    forget_entry(chat, approve(chat, lesson.id).memory_id)

    again = await run_job(chat, "reflexion")

    assert again["lessons_proposed"] == 0 and mentioning(chat, "répétition") == []


async def test_words_of_disagreement_are_no_correction_unless_they_answer_the_assistant(services):
    # An import (or a first message): nobody is being corrected, "pas ça" or not.
    capture(services, "Non, c'est faux, Tom a dit jeudi, pas ça.", NOW.replace(hour=9))
    capture(services, "Tu te trompes, c'est à Lyon.", NOW.replace(hour=10))

    outcome = await run_job(services, "reflexion")

    assert outcome["turns_read"] == 2 and outcome["corrections"] == 0
    assert [p for p in proposals(services) if p.origin == "reflexion"] == []


async def test_elora_learn_does_not_relearn_a_forgotten_entry_from_the_message_it_came_from(
    services,
):
    await ask(services, "Je joue du violoncelle le mardi soir.")
    [proposal] = mentioning(services, "violoncelle")
    forget_entry(services, approve(services, proposal.id).memory_id)

    outcome = await learn_archive(services)

    assert mentioning(services, "violoncelle") == []
    assert outcome["proposals"] == 0


async def test_the_tombstone_blocks_the_same_text_from_another_message(services):
    first = capture(services, "Je joue du violoncelle le mardi soir.", NOW - timedelta(days=3))
    await learn_archive(services)
    [proposal] = mentioning(services, "violoncelle")
    assert proposal.source_capture_ids == [first]
    forget_entry(services, approve(services, proposal.id).memory_id)

    # Said again: in an archived chat (learn) and live (extraction after the exchange).
    capture(services, "Je joue du violoncelle le mardi soir.", NOW, chat_id="other")
    learned = await learn_archive(services)
    reply = await ask(services, "Je joue du violoncelle le mardi soir.", chat_id="c7")

    assert learned["blocked"] == 1 and learned["proposals"] == 0
    assert reply.learning["blocked"] == 1 and reply.learning["proposals"] == []
    assert mentioning(services, "violoncelle") == []


async def test_an_open_proposal_of_a_forgotten_text_cannot_be_approved(services):
    from core.memory.tombstones import Forgotten

    capture(services, "Je joue du violoncelle le mardi soir.", NOW, chat_id="a")
    await learn_archive(services)
    (first,) = mentioning(services, "violoncelle")
    # The same words, punctuated otherwise, filed before the forget: forget's phrase search
    # (which erases proposals holding the forgotten text) does not see it as a copy; the
    # tombstone, on words alone, does.
    second = services.proposals.create(
        text="Je joue du violoncelle, le mardi-soir !",
        kind=first.kind,
        tier=first.tier,
        candidate=dict(first.candidate, text="Je joue du violoncelle, le mardi-soir !"),
    )
    forget_entry(services, approve(services, first.id).memory_id)
    assert services.proposals.get(second.id) is not None

    with pytest.raises(Forgotten):
        approve(services, second.id)
    services.db.execute("UPDATE proposals SET status = 'recommended' WHERE id = ?", (second.id,))
    assert approve_recommended(services) == []  # the bulk approval passes over it
    assert services.proposals.get(second.id).status in OPEN
    # The operator may still write it in their own words: an edit is explicit.
    assert approve(services, second.id, edit="Violoncelle le mardi soir").canonical_text


async def test_an_explicit_remember_lifts_the_tombstone(home, capsys):
    text = "Je joue du violoncelle le mardi soir"
    assert main(["remember", text, "--json"]) == 0
    memory_id = json.loads(capsys.readouterr().out)["memory_id"]
    assert main(["forget", memory_id, "--yes"]) == 0
    capsys.readouterr()

    assert main(["remember", text, "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["canonical_text"] == text
    from core.config import load_settings
    from core.memory.tombstones import is_buried
    from core.services import Services

    svc = Services(load_settings())
    try:
        assert not is_buried(svc, text)
    finally:
        svc.close()


def test_the_tombstone_keeps_no_plaintext_anywhere_under_elora_home(home, capsys):
    text = "Mon code de coffre est 7781 chez Fidelia Banque"
    assert main(["remember", text, "--json"]) == 0
    memory_id = json.loads(capsys.readouterr().out)["memory_id"]

    assert main(["forget", memory_id, "--yes"]) == 0

    from core.config import load_settings
    from core.memory.tombstones import is_buried, normalise
    from core.services import Services

    svc = Services(load_settings())
    try:
        assert is_buried(svc, text) and is_buried(
            svc, "mon CODE de coffre est 7781, chez fidélia banque"
        )
        [(digest,)] = svc.db.rows("SELECT digest FROM tombstones")
        svc.db.checkpoint()
    finally:
        svc.close()
    assert len(digest) == 64 and int(digest, 16) >= 0  # a hash, not the text
    for needle in (text, normalise(text), "coffre est 7781", "fidelia banque", "Fidelia"):
        assert files_holding(home, needle) == [], needle


async def test_a_model_save_memory_call_on_a_dont_remember_turn_is_refused(model_services, lite):
    def model(body):
        if not body.get("tools"):
            return "{}"  # the classifier: nothing usable, the heuristics decide
        if any(m.get("role") == "tool" for m in body["messages"]):
            return "Je n'en garde rien."
        save = tool("save_memory", text="Camille joue du violoncelle le mardi soir", kind="fact")
        return Reply(tool_calls=[save])

    lite.responder = model

    await ask(model_services, VIOLONCELLE)

    assert mentioning(model_services, "violoncelle") == []
    results = [m for r in lite.requests for m in r["messages"] if m.get("role") == "tool"]
    assert results and "withheld" in results[0]["content"]


async def test_promotion_never_draws_on_entries_resting_on_a_dont_remember_message(services):
    for n in range(3):
        source = capture(services, f"{VIOLONCELLE} ({n})", NOW - timedelta(days=7 * (n + 1)))
        services.memory.save(
            entry(f"event.violoncelle-{n}", "Répétition de violoncelle le mardi soir",
                  kind="event", topics=["musique"], sources=[{"capture_id": source}],
                  attributes={"event_type": "cello"})
        )  # fmt: skip

    outcome = await run_job(services, "promotion")

    assert outcome["episodic_to_semantic"] == 0 and outcome["withheld_by_consent"] == 3
    assert proposals(services) == []


def test_the_mirror_leaves_out_what_rests_on_a_dont_remember_message(services, tmp_path):
    source = capture(services, VIOLONCELLE)
    services.memory.save(
        entry("fact.violoncelle", "Camille joue du violoncelle le mardi soir",
              sources=[{"capture_id": source}])
    )  # fmt: skip
    services.memory.save(entry("fact.lyon", "Camille habite à Lyon"))

    outcome = export_markdown(services, tmp_path / "mirror")

    assert outcome["entries"] == 1 and outcome["withheld_by_consent"] == 1
    assert files_holding(tmp_path / "mirror", "violoncelle") == []
    assert files_holding(tmp_path / "mirror", "Lyon")


def test_an_old_mirror_copy_does_not_bring_a_forgotten_entry_back(services, tmp_path):
    services.memory.save(entry("fact.violoncelle", "Camille joue du violoncelle le mardi soir"))
    export_markdown(services, tmp_path / "copy")
    forget_entry(services, "fact.violoncelle")

    outcome = import_markdown(services, tmp_path / "copy")

    assert outcome["forgotten"] == 1 and outcome["proposals"] == []
    assert proposals(services) == []


async def test_a_bare_dont_remember_this_withholds_the_message_before_it(services):
    said = await ask(services, "Le code d'entrée de l'immeuble est 4412B.", chat_id="c3")
    assert [p.source_capture_ids for p in mentioning(services, "4412b")] == [[said.capture_id]]

    reply = await ask(services, "Ne retiens pas ça, stp.", chat_id="c3")

    assert mentioning(services, "4412b") == []
    assert reply.learning["suppressed"] and reply.learning["withdrawn"] == 1
    assert (await learn_archive(services))["proposals"] == 0
    assert mentioning(services, "4412b") == []
    # Only the message just before, in the same chat: the rest of the history is untouched.
    await ask(services, "Le code du portail est 7700A.", chat_id="c3")
    assert len(mentioning(services, "7700a")) == 1
