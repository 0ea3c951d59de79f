"""Word counts are shared between recalls while the archive's full text is unchanged, and read
again as soon as a message is added, changed or removed."""

from datetime import datetime

import pytest
from sqlalchemy import event

from core.recall.vocabulary import Vocabulary
from tests.core.memory.helpers import message

DAY = datetime(2024, 9, 1, 19, 0)
TERM = ("velo", False)


@pytest.fixture
def archive(services):
    services.archive.store_batch(
        [
            message("1", "On se fait une raclette samedi ?", DAY),
            message("2", "Oui, je ramène le fromage", DAY),
            message("3", "Le vélo est réparé", DAY),
        ]
    )
    return services


def counted(services):
    """A list that grows with every SQL statement the services run."""
    statements: list[str] = []

    @event.listens_for(services.db.engine, "before_cursor_execute")
    def record(_conn, _cursor, statement, *_args):
        statements.append(statement)

    return statements


def documents(services) -> int:
    vocabulary = Vocabulary(services)
    vocabulary.scores("vélo", {1: "Le vélo est réparé"})  # reads the word's count
    return vocabulary.documents[TERM]


# Sharing counts between recalls is SQLite's (FTS5 counts walk doclists); PostgreSQL reads each
# count from captures_vocab by its key, so it keeps nothing between recalls.
@pytest.mark.sqlite_only
def test_a_second_recall_reuses_the_counts_read_by_the_first(archive):
    assert documents(archive) == 1
    statements = counted(archive)

    assert documents(archive) == 1
    assert not [s for s in statements if "captures_vocab" in s]


def test_a_message_added_after_a_cached_read_is_counted(archive):
    assert documents(archive) == 1

    archive.archive.store_batch([message("4", "Un vélo chez Nora vendredi !", DAY)])

    assert documents(archive) == 2


def test_a_message_removed_or_changed_after_a_cached_read_is_counted(archive):
    assert documents(archive) == 1
    with archive.db.session(write=True) as session:
        session.connection().exec_driver_sql(
            "UPDATE captures SET text = 'Oui, je ramène le vélo' WHERE message_id = '2'"
        )
        session.commit()
    assert documents(archive) == 2

    with archive.db.session(write=True) as session:
        session.connection().exec_driver_sql("DELETE FROM captures WHERE message_id = '3'")
        session.commit()
    assert documents(archive) == 1


# Sharing counts between recalls is SQLite's (FTS5 counts walk doclists); PostgreSQL reads each
# count from captures_vocab by its key, so it keeps nothing between recalls.
@pytest.mark.sqlite_only
def test_another_database_does_not_share_the_counts(archive, settings, embedder, clock, tmp_path):
    from core.config import load_settings
    from core.services import Services

    assert documents(archive) == 1
    other_home = tmp_path / "other"
    other = Services(load_settings(home=other_home), embedder=embedder, clock=clock)
    try:
        assert documents(other) == 0
    finally:
        other.close()


def test_words_counted_after_the_total_was_read_score_without_failing(archive):
    # Another process archives messages while a pack is built: the total was read before
    # them, the counts of a word looked up later include them (an import running beside the
    # bot made "math domain error" out of a reply).
    vocabulary = Vocabulary(archive)
    texts = {1: "La trottinette est au garage", 2: "Le vélo est réparé"}
    assert vocabulary.scores("vélo", texts)  # reads the total: 3 messages
    archive.archive.store_batch(
        [message(str(10 + n), f"trottinette numéro {n}", DAY) for n in range(6)]
    )

    scores = vocabulary.scores("trottinette", texts)

    assert set(scores) == {1}
    assert scores[1] < 0  # SQLite's sign: found, and weighed as a word of every message


def test_an_anchors_words_leave_out_those_most_messages_hold_but_the_rarest(services):
    # "soir" is in every message, "badminton" in a quarter, "Gerland" in one.
    texts = ["ce soir badminton", "ce soir apéro", "ce soir ciné", "ce soir dodo"] * 5
    texts[0] = "ce soir badminton au gymnase Gerland"
    services.archive.store_batch([message(str(n), text, DAY) for n, text in enumerate(texts)])
    vocabulary = Vocabulary(services)
    anchor = "Badminton ce soir à Gerland"
    every = str(vocabulary.rarest(anchor, 6))
    assert "gerla" in every and "badmin" in every and "soir" in every
    kept = str(vocabulary.rarest(anchor, 6, common=0.5))
    assert "gerla" in kept and "badmin" in kept and "soir" not in kept
    # The rarest word stays, however common: an anchor is always searched by something.
    assert "soir" in str(vocabulary.rarest("ce soir", 6, common=0.01))


# A live surface archives each message just before recalling for it: common words' counts are
# kept across a few new messages (off by at most one per message), rare ones are read again.
@pytest.mark.sqlite_only
def test_a_common_words_count_is_kept_across_a_few_new_messages_then_read_again(
    services, monkeypatch
):
    from core.recall import vocabulary as module

    monkeypatch.setattr(module, "COMMON", 4)
    monkeypatch.setattr(module, "DRIFT", 2)
    services.archive.store_batch(
        [message(str(n), f"Le vélo numéro {n}", DAY) for n in range(4)]
        + [message("9", "Une raclette samedi", DAY)]
    )
    assert documents(services) == 4
    raclette = ("racle", True)  # a prefix: raclette, raclettes

    def counts():
        vocabulary = Vocabulary(services)
        vocabulary.scores("vélo raclette", {1: "Le vélo"})
        return vocabulary.documents[TERM], vocabulary.documents[raclette]

    services.archive.store_batch([message("10", "Un vélo et une raclette", DAY)])
    statements = counted(services)
    # The common word's count is the one read before; the rare one's is read again, exactly.
    assert counts() == (4, 2)
    assert not [s for s in statements if "captures_vocab" in s and "term IN" in s]

    services.archive.store_batch(
        [message("11", "Encore un vélo", DAY), message("12", "Toujours un vélo", DAY)]
    )
    assert counts() == (7, 2)  # three messages since the first read: more than DRIFT


@pytest.mark.sqlite_only
def test_removed_messages_count_as_drift_too(services, monkeypatch):
    from core.recall import vocabulary as module

    monkeypatch.setattr(module, "COMMON", 4)
    monkeypatch.setattr(module, "DRIFT", 2)
    services.archive.store_batch([message(str(n), f"Le vélo numéro {n}", DAY) for n in range(6)])
    assert documents(services) == 6

    with services.db.session(write=True) as session:
        session.connection().exec_driver_sql(
            "DELETE FROM captures WHERE message_id IN ('0', '1', '2')"
        )
    assert documents(services) == 3
