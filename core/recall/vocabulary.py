"""The archive's vocabulary: how many messages hold each word, for BM25 of a few candidates.

Asking FTS5 for the BM25 of given rows makes it score every row that matches, which costs in
proportion to the archive. The few candidates a question has are scored here instead
(lexical.bm25) from the document frequencies of fts5vocab, looked up once per recall.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.recall.lexical import bm25, query_terms, stem_terms, terms, word_forms
from core.storage.fulltext import Match

if TYPE_CHECKING:
    from core.recall.turn_search import TurnHit
    from core.services import Services

Term = tuple[str, bool]  # (term, is a prefix)
MAX_TERMS = 12  # words of a question searched (lexical.query_terms)


# Counts already read, shared by the recalls of a process: {database: _Shared}. A common
# word's count costs a walk through every message holding it (about 2 ms at 100k messages), and
# a live surface archives the message it answers just before recalling: kept only while the
# index is unchanged, every pack read its common words afresh (20-30 ms at 100k messages).
SHARED_MAX = 50_000  # counts kept at most (a few MB), then read afresh
# Once messages were added or removed, a count of COMMON or more is still used while at most
# DRIFT messages came or went since the counts were first read: each moves a word's count by one
# at most, so such a count is off by a tenth at worst (and BM25's weight of so common a word by
# far less); smaller counts are read again, exactly (they cost little). An edited message moves
# a few counts by one and is not counted (edits are rare next to new messages).
COMMON = 500
DRIFT = 50


@dataclass
class _Shared:
    stamp: bytes  # FTS5's structure record when the counts were last checked
    top: int  # the newest message's rowid when they were first read
    rows: int  # how many messages the index held then
    counts: dict[Term, int]


_SHARED: weakref.WeakKeyDictionary[Any, _Shared] = weakref.WeakKeyDictionary()


class Vocabulary:
    """Document frequencies of the words one recall meets (cached for its duration, and
    between recalls while no message was added, changed or removed)."""

    def __init__(self, services: Services):
        self.services = services
        self.documents: dict[Term, int] = {}
        self.total = 0
        self.said: dict[int, float] = {}  # information of texts already read, by rowid

    def _lookup(self, wanted: list[Term]) -> None:
        missing = [q for q in wanted if q not in self.documents]
        if not missing and self.total:
            return
        with self.services.db.reading() as conn:
            if not self.total:
                self.total = conn.exec_driver_sql("SELECT max(rowid) FROM captures").scalar() or 1
                self._share(conn)
                missing = [q for q in wanted if q not in self.documents]
            exact = [term for term, prefix in missing if not prefix]
            if exact:
                marks = ",".join("?" * len(exact))
                found = dict(
                    conn.exec_driver_sql(
                        f"SELECT term, doc FROM captures_vocab WHERE term IN ({marks})",
                        tuple(exact),
                    ).all()
                )
                self.documents.update({(t, False): int(found.get(t, 0)) for t in exact})
            for term, prefix in missing:
                if prefix:  # every word starting so: a range of the vocabulary
                    upper = term[:-1] + chr(ord(term[-1]) + 1)
                    count = conn.exec_driver_sql(
                        "SELECT sum(doc) FROM captures_vocab WHERE term >= ? AND term < ?",
                        (term, upper),
                    ).scalar()
                    self.documents[(term, True)] = int(count or 0)

    def _share(self, conn) -> None:
        """Use the counts other recalls read (see COMMON and DRIFT). FTS5 rewrites its
        structure record (id 10 of captures_fts_data) on every change to the index: the record
        is the stamp of the state the counts were read from; its averages record (id 1) starts
        with the number of messages indexed. Messages come and go by their rowid above the
        newest one (`self.total`) and by that number: a change to either counts as drift."""
        db = self.services.db
        if conn.dialect.name != "sqlite":
            return
        stamp, averages = (
            conn.exec_driver_sql(
                "SELECT (SELECT block FROM captures_fts_data WHERE id = 10),"
                " (SELECT block FROM captures_fts_data WHERE id = 1)"
            ).one()
        )  # fmt: skip
        if stamp is None:
            return
        rows = _varint(averages) if averages else 0
        shared = _SHARED.get(db)
        if shared is None or len(shared.counts) > SHARED_MAX:
            shared = None
        elif shared.stamp != stamp:
            added = self.total - shared.top
            drift = abs(added) + abs(rows - shared.rows - added)  # added above, and the rest
            if drift > DRIFT:
                shared = None
            else:  # common words' counts still serve; the others are read again
                common = {t: n for t, n in shared.counts.items() if n >= COMMON}
                shared = _Shared(bytes(stamp), shared.top, shared.rows, common)
                _SHARED[db] = shared
        if shared is None:
            shared = _SHARED[db] = _Shared(bytes(stamp), self.total, rows, {})
        self.documents = shared.counts

    def scores(self, query: str, texts: dict[int, str], forms: bool = False) -> dict[int, float]:
        """BM25 (negative, as SQLite gives it) of these texts for the query's words (with their
        other forms: lexical.word_forms)."""
        wanted = stem_terms(query) if forms else query_terms(query)
        if not wanted or not texts:
            return {}
        self._lookup(wanted)
        return bm25(wanted, texts, {q: self.documents.get(q, 0) for q in wanted}, self.total)

    def rarest(self, text: str, keep: int, common: float = 1.0, seen: int = 1) -> Match | None:
        """An FTS5 expression of the `keep` rarest words of a text (its most distinctive ones),
        each with its forms (lexical.word_forms): searching every word of a message matches most
        of the archive. Words in more than a `common` share of the messages are left out but
        for the rarest word: they distinguish nothing, and each costs FTS5 a score for every
        message holding it; so are words in fewer than `seen` messages (2: an archived text's
        words that some other message holds too)."""
        words = [word_forms(w) for w in terms(text)[:MAX_TERMS]]
        if not words:
            return None
        self._lookup([f for forms in words for f in forms])

        def count(forms: list[Term]) -> int:
            return sum(self.documents.get(f, 0) for f in forms)

        rare = sorted((forms for forms in words if count(forms) >= max(seen, 1)), key=count)[:keep]
        rare = rare[:1] + [forms for forms in rare[1:] if count(forms) <= common * self.total]
        found = [f for forms in rare for f in forms if self.documents.get(f)]
        return Match(found) if found else None

    def share(self, words: tuple[str, ...]) -> float:
        """The share of the messages holding the commonest of these words."""
        wanted = [(w, False) for w in words]
        self._lookup(wanted)
        return max((self.documents.get(w, 0) for w in wanted), default=0) / self.total

    def information(self, texts: dict[int, str], enough: float) -> dict[int, float]:
        """How much each text says, in rare words, up to `enough`: the sum of its words' inverse
        document frequencies over that of a word used once in the archive ("haha yes exactly"
        and "noted" are about 1, "Inscrite à la salle Fitness Park Part-Dieu, badge 55102" about
        7). Words everyone uses say little; the scale does not depend on the archive's size.
        A text of `enough` * 2 words or more is taken as saying enough unread (the counts of
        common words are what cost), and so is one twice as long before stopwords go."""
        said = {rowid: self.said[rowid] for rowid in texts if rowid in self.said}
        words = {}
        for rowid, text in texts.items():
            if rowid in said:
                continue
            if len(text.split()) >= enough * 4:
                said[rowid] = enough
                continue
            found = terms(text)
            if len(found) >= enough * 2:
                said[rowid] = enough
            else:
                words[rowid] = found
        self._lookup(list({(w, False) for ws in words.values() for w in ws}))
        unit = math.log(self.total + 1)  # a word used once in the archive

        def idf(word: str) -> float:
            return math.log((self.total + 1) / max(1, self.documents.get((word, False), 0)))

        said.update({rowid: min(enough, sum(map(idf, ws)) / unit) for rowid, ws in words.items()})
        self.said.update(said)
        return said

    def shared(self, anchor: TurnHit, turns: list[TurnHit]) -> dict[int, float]:
        """How much of the anchor's distinctive wording each turn shares: its BM25 for the
        anchor's words over the anchor's own (1 = as strong a match as the anchor itself). BM25
        weighs a rare name above a word everyone uses; the ratio does not depend on the size of
        the archive."""
        texts = {t.rowid: t.text for t in turns}
        texts[anchor.rowid] = anchor.text
        raw = self.scores(anchor.text, texts)
        own = raw.pop(anchor.rowid, None)
        if not own:
            return {}
        return {rowid: min(1.0, score / own) for rowid, score in raw.items()}


def _varint(data: bytes) -> int:
    """The SQLite varint at the start of `data` (FTS5 records start with one)."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value
