from datetime import datetime

import pytest

from core.archive.records import CaptureIn
from core.memory.api import save_session_context, search_session_context
from core.services import Services
from tests.fakes import BrokenEmbedder

# Vector paths: CI runs these once more against a `chroma run` server.
pytestmark = pytest.mark.chroma_server

LEASE = (
    "Article 4 — Dépôt de garantie. À la signature du bail, le locataire verse un dépôt de "
    "garantie de 950 euros, soit un mois de loyer hors charges. Le bailleur le restitue dans un "
    "délai d'un mois après la remise des clés lorsque l'état des lieux de sortie est conforme à "
    "l'état des lieux d'entrée, et dans un délai de deux mois dans le cas contraire, déduction "
    "faite des sommes restant dues et des réparations locatives justifiées par des devis ou des "
    "factures. Aucun intérêt n'est dû sur ce dépôt, qui ne peut en aucun cas servir au paiement "
    "du dernier mois de loyer."
)
RECIPE = (
    "Tarte tatin de mamie. Éplucher huit pommes reinettes et les couper en quartiers. Dans un "
    "moule à manqué, faire fondre cent grammes de beurre avec cent cinquante grammes de sucre "
    "jusqu'à obtenir un caramel blond. Ranger les quartiers de pommes bien serrés sur le caramel, "
    "laisser cuire vingt minutes à feu doux, puis recouvrir d'une pâte brisée en rentrant les "
    "bords. Enfourner quarante minutes à cent quatre-vingts degrés, attendre dix minutes et "
    "retourner la tarte sur un plat."
)
RUNBOOK = (
    "Deployment runbook. Before deploying the billing service, drain the worker queue and take a "
    "database snapshot. Run the migrations with the maintenance flag on, then roll the containers "
    "one node at a time behind the load balancer. If the health check fails twice, roll back to "
    "the previous image tag and page the on-call engineer. Never deploy on Friday afternoon, and "
    "keep the release notes in the shared changelog so support knows which version customers run."
)
PASTE = "\n\n".join([LEASE, RECIPE, RUNBOOK])
DEPOSIT = "Quel est le montant du dépôt de garantie ?"


def _search(services, query, *, source_id="bail.pdf", user_id="7", chat_id="42"):
    return search_session_context(services, source_id, query, user_id=user_id, chat_id=chat_id)


def test_a_large_paste_is_chunked_and_the_relevant_chunk_comes_back(services):
    count = save_session_context(services, PASTE, "bail.pdf", user_id="7", chat_id="42")

    hits = _search(services, DEPOSIT)

    assert count >= 3
    assert len(hits) == 1
    assert "dépôt de garantie de 950 euros" in hits[0]["text"]
    assert hits[0]["source_id"] == "bail.pdf"
    assert hits[0]["score"] >= 0.45


def test_chunks_below_the_threshold_are_not_returned(services):
    save_session_context(services, PASTE, "bail.pdf", user_id="7", chat_id="42")
    everything = services.session_memory.search("7", "42", "bail.pdf", DEPOSIT, threshold=0.0)
    weak = [h for h in everything if h.score < 0.45]
    assert weak  # the paste does hold chunks that do not answer the question

    returned = _search(services, DEPOSIT)

    assert {h["position"] for h in returned}.isdisjoint({h.position for h in weak})
    assert all(h["score"] >= 0.45 for h in returned)
    assert _search(services, "Qui a gagné la coupe du monde de rugby en 2023 ?") == []


def test_the_threshold_comes_from_settings(home, embedder):
    from core.config import load_settings

    lenient = Services(load_settings(session_threshold=0.1), embedder=embedder)
    try:
        save_session_context(lenient, PASTE, "bail.pdf", user_id="7", chat_id="42")
        hits = _search(lenient, DEPOSIT)
    finally:
        lenient.close()

    assert len(hits) > 1  # the default 0.45 keeps only the lease chunk
    assert min(h["score"] for h in hits) < 0.45


def test_another_chat_source_or_user_never_sees_the_chunks(services):
    save_session_context(services, PASTE, "bail.pdf", user_id="7", chat_id="42")
    others = {
        ("7", "43", "bail.pdf"): "Dans le groupe : le dépôt de garantie était de 1400 euros.",
        ("7", "42", "bail-ancien.pdf"): "Ancien bail : dépôt de garantie de 1200 euros.",
        ("8", "42", "bail.pdf"): "Bail de Léa : dépôt de garantie de 700 euros.",
    }
    for (user_id, chat_id, source_id), text in others.items():
        save_session_context(services, text, source_id, user_id=user_id, chat_id=chat_id)

    mine = _search(services, DEPOSIT)

    assert [h["source_id"] for h in mine] == ["bail.pdf"]
    assert "950 euros" in mine[0]["text"]
    for (user_id, chat_id, source_id), text in others.items():
        theirs = _search(services, DEPOSIT, source_id=source_id, user_id=user_id, chat_id=chat_id)
        assert [h["text"] for h in theirs] == [text]


def test_ending_a_session_purges_its_chunks_only(services):
    save_session_context(services, PASTE, "bail.pdf", user_id="7", chat_id="42")
    save_session_context(services, LEASE, "bail.pdf", user_id="7", chat_id="43")
    total = services.vectors.count("ephemeral")

    removed = services.session_memory.end_session("7", "42")

    assert removed >= 3
    assert _search(services, DEPOSIT) == []
    assert services.session_memory.sources("7", "42") == []
    assert services.vectors.count("ephemeral") == total - removed
    assert _search(services, DEPOSIT, chat_id="43")


def test_chunks_past_their_ttl_are_purged_and_younger_ones_stay(services, clock):
    save_session_context(services, PASTE, "bail.pdf", user_id="7", chat_id="42")
    clock.advance(hours=20)
    save_session_context(services, RUNBOOK, "runbook.md", user_id="7", chat_id="42")

    clock.advance(hours=3)  # 23h: nothing has expired yet (TTL is 24h)
    assert services.session_memory.purge_expired() == 0
    clock.advance(hours=2)  # 25h: the paste has expired, the runbook has not
    purged = services.session_memory.purge_expired()

    assert purged >= 3
    assert _search(services, DEPOSIT) == []
    assert services.session_memory.sources("7", "42") == ["runbook.md"]
    kept = _search(services, "What to do before deploying billing?", source_id="runbook.md")
    assert kept and "drain the worker queue" in kept[0]["text"]
    assert services.vectors.count("ephemeral") == 1


def test_session_memory_without_embeddings_falls_back_to_words(settings):
    broken = Services(settings, embedder=BrokenEmbedder())
    try:
        count = save_session_context(broken, PASTE, "bail.pdf", user_id="7", chat_id="42")
        hits = _search(broken, "dépôt de garantie", chat_id="42")
    finally:
        broken.close()

    assert count >= 3
    assert hits and "dépôt de garantie de 950 euros" in hits[0]["text"]


def _archived(services, chat_id, role, text, minute):
    """A message the archive has stored and embedded (its turn key has a vector)."""
    item = CaptureIn(surface="telegram", chat_id=chat_id, text=text, role=role,
                     sent_at=datetime(2025, 3, 14, 9, minute), user_id="7")  # fmt: skip
    result = services.archive.capture(item)
    assert result.indexed
    return {"role": role, "content": text, "capture_id": result.id,
            "at": f"2025-03-14T09:{minute:02d}:00"}  # fmt: skip


def test_distilled_turns_take_the_archives_vectors_and_only_the_rest_is_embedded(services):
    turns = [
        _archived(services, "42", "user", LEASE, 0),
        _archived(services, "42", "assistant", "Noted: 950 euros, back within a month.", 1),
        _archived(services, "42", "user", RECIPE, 2),
        _archived(services, "42", "assistant", "Noted, the tatin.", 3),
        # Not in the archive (a window turn with no capture): its chunk is embedded.
        {"role": "user", "content": RUNBOOK, "capture_id": None, "at": "2025-03-14T09:04:00"},
    ]
    embedded = []
    embed = services.vectorspace.embed_passages
    services.vectorspace.embed_passages = lambda texts: embedded.append(texts) or embed(texts)

    count = services.session_memory.save_turns("7", "42", "conversation:42", turns)

    assert count == 3  # whole turns to a chunk: the lease and its answer, the tart, the runbook
    assert len(embedded) == 1 and len(embedded[0]) == 1
    assert embedded[0][0].startswith("user (2025-03-14T09:04): Deployment runbook")
    hits = _search(services, DEPOSIT, source_id="conversation:42")
    assert "dépôt de garantie de 950 euros" in hits[0]["text"]
    assert "assistant (2025-03-14T09:01): Noted: 950 euros" in hits[0]["text"]
    runbook = _search(services, "What to do before deploying billing?", source_id="conversation:42")
    assert runbook and "drain the worker queue" in runbook[0]["text"]
