import json
from datetime import datetime

import pytest

from core.archive.records import CaptureIn
from core.cli.main import main
from core.errors import EmbedderMismatch
from core.services import Services
from core.storage.db import run
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.chroma_server


def _capture(services, n: int, text: str):
    return services.archive.capture(
        CaptureIn(
            surface="telegram",
            chat_id="42",
            message_id=str(n),
            text=text,
            sent_at=datetime(2024, 5, 1, 9, n),
        )
    )


@pytest.fixture
def home_indexed_by_other_model(settings):
    """A home whose archive vectors were made by another embedding model."""
    other = Services(settings, embedder=HashEmbedder())
    assert _capture(other, 1, "Je déménage à Lyon en mai").indexed
    assert _capture(other, 2, "La facture d'électricité est arrivée").indexed
    other.close()
    return settings


def test_query_with_another_embedder_raises_mismatch_naming_reindex(
    home_indexed_by_other_model, embedder
):
    services = Services(home_indexed_by_other_model, embedder=embedder)

    with pytest.raises(EmbedderMismatch, match="elora reindex"):
        services.vectorspace.query("archive", "où est-ce que je déménage ?", 3)
    with pytest.raises(EmbedderMismatch):
        services.vectorspace.upsert("archive", ["x"], ["un texte"], [{"chat_id": "42"}])
    services.close()


def test_capture_with_mismatched_embedder_is_archived_but_not_indexed(
    home_indexed_by_other_model, embedder
):
    services = Services(home_indexed_by_other_model, embedder=embedder)

    result = _capture(services, 3, "Le dentiste a déplacé le rendez-vous")

    assert result.status == "stored"
    assert not result.indexed
    assert services.archive.counts()["chunks_pending_vectors"] == 1
    services.close()


def test_same_embedder_with_another_dimension_is_a_mismatch(home_indexed_by_other_model):
    services = Services(home_indexed_by_other_model, embedder=HashEmbedder(dim=128))

    with pytest.raises(EmbedderMismatch):
        services.vectorspace.query("archive", "déménage", 3)
    services.close()


def test_reindex_rebuilds_vectors_and_queries_work_again(
    home_indexed_by_other_model, embedder, capsys
):
    stale = Services(home_indexed_by_other_model, embedder=embedder)
    _capture(stale, 3, "Le dentiste a déplacé le rendez-vous à jeudi")
    stale.close()

    assert main(["reindex", "--json"]) == 0

    outcome = json.loads(capsys.readouterr().out)
    assert outcome["chunks"] == outcome["indexed"] == 3
    assert outcome["embedder"] == f"{embedder.name}|{embedder.dim}"
    services = Services(home_indexed_by_other_model, embedder=embedder)
    assert services.archive.counts()["chunks_pending_vectors"] == 0
    assert services.vectors.count("archive") == 3
    hits = services.vectorspace.query("archive", "where am I moving to?", 3)
    with services.db.session() as session:
        top = run(session.connection(), "SELECT text FROM chunks WHERE id = ?", (hits[0].id,))
        assert "déménage" in top.scalar_one()
    services.close()
