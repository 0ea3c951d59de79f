"""A pack embeds its texts in one engine call: the question, the question in its speakers'
words, in the archive's other language, and the event it is anchored on. Each engine call
costs its own fixed share of the embedding (18 -> 26 ms per pack when a rendering in the
other language took a call of its own). Counted at the real embedder, under the services'
embedding worker."""

from datetime import datetime, timedelta

import pytest

from core.recall.crosslingual import other_language
from core.recall.pack import build_pack
from core.recall.vocabulary import Vocabulary
from core.services import Services
from tests.core.memory.helpers import message
from tests.core.recall.packs import archive_order

CHAT = "77"
CHATTER = [
    "tu fais quoi ce soir ?",
    "je regarde un film, et toi ?",
    "il pleut encore, j'en peux plus",
    "on se fait un resto jeudi ?",
    "grave, je réserve",
    "trop de boulot aujourd'hui, la revue de sprint me rend dingue",
    "j'ai vu Dune hier, franchement pas mal",
    "c'est noté",
    "missed the bus, running late",
    "the movers come on Saturday morning, boxes everywhere",
]
PARTY = ("Party for my 40th on Saturday May 17 at our place", datetime(2024, 4, 2, 20, 0))
MOVED = ("Party's on Sunday May 18 now, the caterer couldn't do Saturday", datetime(2024, 4, 25))


class CountingEmbedder:
    """The real embedder, with every engine call it is asked for written down."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.queries: list[list[str]] = []  # the texts of each query call

    def embed_query(self, text):
        """One query, one call."""
        self.queries.append([text])
        return self.inner.embed_query(text)

    def embed_queries(self, texts):
        """Several queries, one call."""
        self.queries.append(list(texts))
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts):
        """Passages are not counted (indexing, not recall)."""
        return self.inner.embed_passages(texts)

    def calibrate(self, similarity, kind="query"):
        """The real calibration."""
        return self.inner.calibrate(similarity, kind)


@pytest.fixture
def counted(settings, embedder, clock):
    counting = CountingEmbedder(embedder)
    svc = Services(settings, embedder=counting, clock=clock)
    day = datetime(2024, 1, 3, 19, 0)
    captures = []
    for n in range(120):  # months of French small talk with Sam around English statements
        when = day + timedelta(days=n, minutes=n)
        sender = "Sam Taylor" if n % 2 else "Camille"
        text = CHATTER[n % len(CHATTER)]
        captures.append(message(str(500 + n), text, when, sender=sender, chat_id=CHAT))
    for n, (text, when) in enumerate((PARTY, MOVED)):
        captures.append(message(str(100 + n), text, when, sender="Sam Taylor", chat_id=CHAT))
    svc.archive.store_batch(captures)
    svc.archive.index_pending()
    counting.queries.clear()
    yield svc, counting
    svc.close()


def test_a_present_state_and_its_rendering_are_embedded_in_one_call(counted):
    services, counting = counted
    question = "C'est quand l'anniversaire de Sam ?"
    rendered = other_language(question, Vocabulary(services))
    assert rendered is not None  # the archive speaks both languages: the rendering is searched

    pack = build_pack(services, question)

    assert pack.classification.present_state
    assert counting.queries == [[question, rendered]]
    found = [m for m in archive_order(pack) if m in ("100", "101")]
    assert found and found[0] == "101"  # ... and still finds the English update first


def test_a_question_naming_a_speaker_is_embedded_in_one_call(counted):
    services, counting = counted

    pack = build_pack(services, "What did Sam say about the movers?")

    assert not pack.classification.present_state
    assert len(counting.queries) == 1
    assert "What did Sam say about the movers?" in counting.queries[0]


def test_the_event_a_period_is_anchored_on_is_embedded_with_the_question(counted):
    services, counting = counted
    question = "What did Sam say after the party?"

    pack = build_pack(services, question)

    assert pack.classification.time_window.anchor == "party"
    assert len(counting.queries) == 1
    assert counting.queries[0][0] == question and "party" in counting.queries[0]
    assert pack.time_window is not None and pack.time_window.start is not None  # it was dated
