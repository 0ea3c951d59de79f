"""Lexical search (SQLite FTS5 or PostgreSQL tsvector, BM25): queries for French and English."""

from __future__ import annotations

import functools
import math
import re
import unicodedata

from core.storage.fulltext import Match

STOPWORDS = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "this",
        "that",
        "these",
        "those",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "they",
        "them",
        "their",
        "he",
        "him",
        "his",
        "she",
        "her",
        "its",
        "do",
        "does",
        "did",
        "done",
        "not",
        "no",
        "yes",
        "as",
        "if",
        "so",
        "but",
        "than",
        "then",
        "there",
        "here",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "how",
        "why",
        "which",
        "will",
        "would",
        "can",
        "could",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "have",
        "has",
        "had",
        "about",
        "into",
        "over",
        "under",
        "again",
        "tell",
        "say",
        "said",
        "know",
        "remember",
        "recall",
        "please",
        "any",
        "some",
        "all",
        "le",
        "la",
        "les",
        "un",
        "une",
        "des",
        "du",
        "de",
        "d",
        "l",
        "et",
        "ou",
        "en",
        "au",
        "aux",
        "a",
        "est",
        "sont",
        "ete",
        "etre",
        "je",
        "j",
        "me",
        "m",
        "mon",
        "ma",
        "mes",
        "tu",
        "te",
        "t",
        "ton",
        "ta",
        "tes",
        "il",
        "elle",
        "on",
        "nous",
        "vous",
        "ils",
        "elles",
        "leur",
        "leurs",
        "ce",
        "c",
        "cet",
        "cette",
        "ces",
        "que",
        "qu",
        "qui",
        "quoi",
        "dont",
        "ou",
        "pour",
        "par",
        "sur",
        "dans",
        "avec",
        "sans",
        "pas",
        "ne",
        "n",
        "plus",
        "se",
        "s",
        "y",
        "ai",
        "as",
        "avait",
        "avais",
        "fait",
        "faire",
        "quel",
        "quelle",
        "quels",
        "quelles",
        "est-ce",
        "comment",
        "pourquoi",
        "quand",
        "rappelle",
        "souviens",
        "dit",
        "dis",
        "peux",
        "veux",
    ]
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


# The combining marks Latin accents decompose into: removed by one regex; a character-by-
# character loop (all of unicodedata.combining's) only runs for what remains non-ASCII.
_LATIN_MARKS = re.compile("[\u0300-\u036f]")


def fold(text: str) -> str:
    """Lowercase without accents, as FTS5's unicode61 tokenizer with remove_diacritics sees it."""
    text = text.lower()
    if text.isascii():
        return text
    text = _LATIN_MARKS.sub("", unicodedata.normalize("NFKD", text))
    if text.isascii():
        return text
    return "".join(c for c in text if not unicodedata.combining(c))


TERMS_KEPT_CHARS = 2000  # the words of texts up to this long are kept (_kept_terms)


def terms(question: str) -> list[str]:
    """Distinctive words of a question (stopwords removed, accents folded, order kept)."""
    if len(question) > TERMS_KEPT_CHARS:
        return list(_terms(question))
    return list(_kept_terms(question))  # a list of its own: callers may change theirs


def _terms(text: str) -> tuple[str, ...]:
    words = [w for w in _WORD.findall(fold(text)) if len(w) > 1 and w not in STOPWORDS]
    return tuple(dict.fromkeys(words))


@functools.lru_cache(maxsize=4096)
def _kept_terms(text: str) -> tuple[str, ...]:
    """`_terms`, kept: an update's search reads the words of the same candidates many times."""
    return _terms(text)


# Inflectional endings of English and French words, longest first: what is left (at least
# STEM_MIN letters) is searched as a prefix, so "badges" finds "badge", "painted" finds
# "painting" and "familles" finds "famille", without a stemmer in the index (the same query
# works on every full-text engine).
_ENDINGS = (
    "ements", "ement", "ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied",
    "ees", "ee", "es", "ed", "s", "x", "e",
)  # fmt: skip
# ("-er" is left alone: career, sister, summer are not inflected forms.)
STEM_MIN = 4
PREFIX_LONG = 7  # words this long are searched by their first letters (déménage ~ déménagement)


def stem(word: str) -> str:
    """A word without its inflectional ending (at least STEM_MIN letters kept), else itself."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= STEM_MIN:
            return word[: -len(ending)]
    return word


def word_forms(word: str) -> list[tuple[str, bool]]:
    """What one query word is searched as: (term, is a prefix) alternatives. A long word by its
    first letters, a shorter one by its stem ("family" ~ famil*, "paint" ~ paint*); words too
    short for a prefix by their other forms ("kids" ~ "kid", "hike" ~ "hiking")."""
    if not word.isalpha() or len(word) < 3:
        return [(word, False)]
    if len(word) >= PREFIX_LONG:
        return [(min(stem(word), word[: max(5, len(word) - 3)], key=len), True)]
    for ending in ("ing", "ed"):  # hiking, baked: their stems are too short for a prefix
        if word.endswith(ending) and len(word) - len(ending) < STEM_MIN:
            base = word[: -len(ending)]
            return [(word, False), (base + "e", False), (base + "es", False)]
    if word.endswith("y") and len(word) > STEM_MIN:  # family ~ families
        return [(word[:-1], True)]
    root = stem(word)
    if root != word or (len(word) >= STEM_MIN and not word.endswith(("e", "s"))):
        return [(root, True)]  # badges ~ badg*, paint ~ paint*, camp ~ camp*
    if word.endswith("e"):
        return [(word, False), (word + "s", False), (word[:-1] + "ing", False), (word + "d", False)]
    other = word[:-1] if word.endswith("s") else word + "s"
    return [(word, False), (other, False)]


def query_terms(question: str, max_terms: int = 12) -> list[tuple[str, bool]]:
    """The terms a search scores with, as (term, is a prefix): long words become prefixes
    (déménage ~ déménagement)."""
    out = []
    for word in terms(question)[:max_terms]:
        if len(word) >= PREFIX_LONG and word.isalpha():
            out.append((word[: max(5, len(word) - 3)], True))
        else:
            out.append((word, False))
    return out


def stem_terms(question: str, max_terms: int = 12) -> list[tuple[str, bool]]:
    """The terms of a question's words with their other forms (word_forms), in its order."""
    return list(dict.fromkeys(f for word in terms(question)[:max_terms] for f in word_forms(word)))


def fts_query(question: str, max_terms: int = 12) -> Match | None:
    """A full-text search: OR of the query terms, prefixes starred.

    The result is FTS5's MATCH expression and, for PostgreSQL, its words (core.storage.fulltext).
    """
    words = query_terms(question, max_terms)
    return Match(words) if words else None


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    """A text's words as FTS5's unicode61 tokenizer (diacritics removed) splits them; the same
    candidates are scored several times while one pack is built."""
    return tuple(_WORD.findall(fold(text)))


def bm25(
    query: list[tuple[str, bool]],
    texts: dict,
    documents: dict[tuple[str, bool], int],
    total: int,
) -> dict:
    """BM25 of a few texts for the query terms, as SQLite FTS5 computes it (negative, lower is
    better), from the archive's document frequencies (`documents`, out of `total` rows).

    Computed here for the candidates in hand: asking FTS5 for the BM25 of given rows makes it
    score every row that matches, which costs in proportion to the archive."""
    k1, b = 1.2, 0.75
    # A count may pass the total: a prefix sums its words' counts (a message with "move" and
    # "moved" counts twice), and messages archived meanwhile count in words looked up after the
    # total was read. Such a word is in every message: it weighs the least there is.
    idf = {
        q: max(math.log((max(total - n, 0) + 0.5) / (n + 0.5)), 1e-6)
        for q, n in documents.items()
        if n
    }
    tokenised = {key: _tokens(text) for key, text in texts.items()}
    lengths = [len(t) for t in tokenised.values() if t]
    average = sum(lengths) / len(lengths) if lengths else 1.0
    out = {}
    for key, tokens in tokenised.items():
        norm = k1 * (1 - b + b * len(tokens) / average)
        score = 0.0
        for q in query:
            term, prefix = q
            tf = sum(1 for t in tokens if (t.startswith(term) if prefix else t == term))
            if tf and q in idf:
                score += idf[q] * tf * (k1 + 1) / (tf + norm)
        if score:
            out[key] = -score
    return out


def normalise_bm25(scores: list[float]) -> list[float]:
    """Map SQLite bm25 values (lower is better, negative) onto (0, 1], best = 1."""
    if not scores:
        return []
    best = min(scores)
    if best >= 0:
        return [1.0 for _ in scores]
    return [max(0.0, s / best) for s in scores]


def saturate_bm25(scores: list[float], half: float = 8.0) -> list[float]:
    """Map SQLite bm25 values onto [0, 1) by strength, not rank: s / (s + half), s = -bm25.

    Unlike normalise_bm25, the best match of a query only scores high when it is a strong
    match: a chunk that shares nothing with the query but a speaker's name or a common word
    stays low. `half` is the strength scored 0.5, about one rare term matched.
    """
    return [max(0.0, -s) / (max(0.0, -s) + half) for s in scores]
