"""The people a question names who speak in the archive, and the question's meaning without them.

"What activities has Melanie done with her family?" is answered by Melanie's own turns ("we
went camping with the kids"), which never say her name; the turns that do say it are the other
speaker's ("Thanks, Melanie!"). Who said a turn is matched on its speaker (turn_search's
SPEAKER_BONUS); in the question's vector the name only pulls those replies closer. So the
archive is searched with the question's vector mixed with that of the question without the
names of the people who speak in it: what is asked keeps its weight, and a name that is the
topic ("What is Caroline's identity?") still counts through the full question.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

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


def named_speakers(services: Services, question: str, chats: Sequence[str] | None) -> list[str]:
    """The capitalised words of a question that name someone who speaks in these chats (the
    first or any word of a sender's name), in the question's spelling."""
    names = [n for n in dict.fromkeys(_NAME.findall(question)) if fold(n) not in STOPWORDS]
    names = names[:MAX_NAMES]
    if not names or (chats is not None and not chats):
        return []
    found = []
    with services.db.session() as session:
        conn = session.connection()
        for name in names:
            word = fold(name)
            where, params = "", {}
            if chats is not None:
                marks, params = fulltext.in_list("chat", list(chats))
                where = f"c.chat_id IN {marks}"
            rows = fulltext.matching(
                conn, "captures", Match([(word, False)]).only("sender"), select="c.sender",
                alias="c", where=where, params=params, order="c.rowid", limit=1,
            )  # fmt: skip
            if any(word in _WORD.findall(fold(r[0] or "")) for r in rows):
                found.append(name)
    return found


def without_names(question: str, names: Sequence[str]) -> str:
    """The question with these names (and their possessive) taken out."""
    if not names:
        return question
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    stripped = re.sub(rf"\b({alternatives})(['’]s)?\b", _GONE, question)
    # "Caroline and Melanie both…": the "and" between two names goes with them.
    stripped = re.sub(rf"{_GONE}\s*(,|and|et|&)\s*{_GONE}", _GONE, stripped)
    stripped = re.sub(rf"\s*{_GONE}\s*", " ", stripped)
    stripped = re.sub(r"\s+([?!.,])", r"\1", stripped)
    return re.sub(r"\s+", " ", stripped).strip()


def speaker_free_vector(
    services: Services, question: str, vector: np.ndarray | None, chats: Sequence[str] | None
) -> np.ndarray | None:
    """The question's vector mixed with that of the question without the speakers it names
    (see the module docstring); the vector itself when it names none or embedding fails."""
    if vector is None:
        return None
    names = named_speakers(services, question, chats)
    rest = without_names(question, names)
    if not names or len(_WORD.findall(rest)) < 2:
        return vector
    try:
        other = np.asarray(services.embedder.embed_query(rest), dtype=np.float32)
    except EloraError as exc:
        log.warning("could not embed the question without its names: %s", exc)
        return vector
    mixed = np.asarray(vector, dtype=np.float32) + other
    norm = float(np.linalg.norm(mixed))
    return mixed / norm if norm else vector
