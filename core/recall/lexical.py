"""Lexical search (SQLite FTS5 or PostgreSQL tsvector, BM25): queries for French and English."""

from __future__ import annotations

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


def fold(text: str) -> str:
    """Lowercase without accents, as FTS5's unicode61 tokenizer with remove_diacritics sees it."""
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def terms(question: str) -> list[str]:
    """Distinctive words of a question (stopwords removed, accents folded, order kept)."""
    words = [w for w in _WORD.findall(fold(question)) if len(w) > 1 and w not in STOPWORDS]
    return list(dict.fromkeys(words))


def fts_query(question: str, max_terms: int = 12) -> Match | None:
    """A full-text search: OR of terms, long words as prefixes (déménage ~ déménagement).

    The result is FTS5's MATCH expression and, for PostgreSQL, its words (core.storage.fulltext).
    """
    words = [(w, len(w) >= 7 and w.isalpha()) for w in terms(question)[:max_terms]]
    return Match(words) if words else None


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
