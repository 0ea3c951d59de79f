"""The people a question names who speak in the archive, and the question as they would say it.

"What activities has Melanie done with her family?" is answered by Melanie's own turns ("we
went camping with the kids"), which never say her name and speak in the first person; the turns
that do say her name are the other speaker's ("Thanks, Melanie!"). Who said a turn is matched on
its speaker (turn_search's SPEAKER_BONUS); in the question's vector the name mostly pulls those
replies closer. So the archive is searched with the question's vector mixed with those of the
question without the names and of the question in its speakers' words ("What activities have I
done with her family?"): what is asked gains weight, first-person statements come closer, and a
name that is the topic ("What is Caroline's identity?") still counts through the full question.
Measured on LoCoMo dev: multi-hop R@10 0.55 -> 0.62 (higher in each of its three
conversations), temporal 0.94 -> 0.96, single-hop 0.84 -> 0.85; a present-state question keeps
its own vector (core.recall.evidence), which leaves multi-hop at 0.59 and single-hop at 0.86.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.embeddings import embed_queries
from core.errors import EloraError
from core.recall.lexical import STOPWORDS, fold
from core.storage import fulltext
from core.storage.fulltext import Match

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

MAX_NAMES = 4  # capitalised words of a question checked against the speakers
_NAME = re.compile(r"\b[A-ZÀ-Ý][\w\-]+")  # a capitalised word
_WORD = re.compile(r"[\w\-]+")
_GONE = "\x00"


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words telling a French question from an English one (which first person to use).
_FRENCH = _wordset(
    "est quoi quel quelle quels quelles qui ou quand comment combien pourquoi le la les de du des "
    "un une avec pour et a elle il ils elles son sa ses"
)
_ENGLISH = _wordset(
    "what which who whom whose where when how why the a an of with for and has have did does is "
    "are was were she he her his their"
)


def named_speakers(services: Services, question: str, chats: Sequence[str] | None) -> list[str]:
    """The capitalised words of a question that name someone who speaks in these chats (a word
    of a sender's name), in the question's spelling."""
    names = [n for n in dict.fromkeys(_NAME.findall(question)) if fold(n) not in STOPWORDS]
    names = names[:MAX_NAMES]
    if not names or (chats is not None and not chats):
        return []
    where, params = "", {}
    if chats is not None:
        marks, params = fulltext.in_list("chat", list(chats))
        where = f"c.chat_id IN {marks}"
    found = []
    with services.db.reading() as conn:
        # Any one message will do: FTS5 yields its own rowid order unsorted, so no rank is
        # computed over a name's every message (milliseconds at 100k messages).
        fts = fulltext.INDEXES["captures"].fts
        order = f"{fts}.rowid" if fulltext.dialect(conn) == "sqlite" else "c.rowid"
        for name in names:
            word = fold(name)
            rows = fulltext.matching(
                conn, "captures", Match([(word, False)]).only("sender"), select="c.sender",
                alias="c", where=where, params=params, order=order, limit=1,
            )  # fmt: skip
            if any(word in _WORD.findall(fold(r[0] or "")) for r in rows):
                found.append(name)
    return found


def _names(names: Sequence[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


def without_names(question: str, names: Sequence[str]) -> str:
    """The question with these names (and their possessive) taken out."""
    if not names:
        return question
    alternatives = _names(names)
    stripped = re.sub(rf"\b({alternatives})(['’]s)?\b", _GONE, question)
    # "Caroline and Melanie both…": the "and" between two names goes with them.
    stripped = re.sub(rf"{_GONE}\s*(,|and|et|&)\s*{_GONE}", _GONE, stripped)
    stripped = re.sub(rf"\s*{_GONE}\s*", " ", stripped)
    stripped = re.sub(r"\s+([?!.,])", r"\1", stripped)
    return re.sub(r"\s+", " ", stripped).strip()


def in_their_words(question: str, names: Sequence[str]) -> str:
    """The question as the person it names first would ask it of themselves: "Melanie's pets" →
    "my pets", "has Maria done" → "has I done", "Jon and Gina both" → "we both" (grammar
    matters little to an embedding; the first person is what their own turns say). Another
    name ("What does Jon tell Gina?") stays: it is someone else to that speaker."""
    if not names:
        return question
    alternatives = _names(names)
    words = _WORD.findall(fold(question))
    french = sum(w in _FRENCH for w in words) > sum(w in _ENGLISH for w in words)
    we, my, me = ("nous", "moi", "moi") if french else ("we", "my", "I")
    said = re.sub(rf"\b({alternatives})\s*(and|et|&)\s*({alternatives})\b", we, question)
    first = re.search(rf"\b({alternatives})\b", said)
    if first is None:
        return said
    name = re.escape(first.group(1))
    said = re.sub(rf"\b{name}['’]s\b", my, said)
    return re.sub(rf"\b{name}\b", me, said)


def speaker_texts(services: Services, question: str, chats: Sequence[str] | None) -> list[str]:
    """The question without the speakers it names and in their words, to be embedded with it
    (see the module docstring); none when it names no one who speaks here."""
    names = named_speakers(services, question, chats)
    rest = without_names(question, names)
    if not names or len(_WORD.findall(rest)) < 2:
        return []
    return [rest, in_their_words(question, names)]


def mixed_vector(vector: np.ndarray, others: Sequence[np.ndarray]) -> np.ndarray:
    """The question's vector mixed with those of `speaker_texts` (itself when there are none)."""
    if len(others) == 0:
        return vector
    mixed = np.asarray(vector, dtype=np.float32) + np.sum(np.asarray(others, np.float32), axis=0)
    norm = float(np.linalg.norm(mixed))
    return mixed / norm if norm else vector


def speaker_free_vector(
    services: Services, question: str, vector: np.ndarray | None, chats: Sequence[str] | None
) -> np.ndarray | None:
    """The question's vector mixed with those of the question without the speakers it names
    and in their words (see the module docstring); the vector itself when it names none."""
    if vector is None:
        return None
    texts = speaker_texts(services, question, chats)
    if not texts:
        return vector
    try:
        others = embed_queries(services.embedder, texts)
    except EloraError as exc:
        log.warning("could not embed the question in its speakers' words: %s", exc)
        return vector
    return mixed_vector(vector, others)
