"""The strict schema of a memory entry (its vocabulary is core.memory.vocabulary), slugs and text keys."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.memory.vocabulary import (  # noqa: F401 (re-exported: the schema's vocabulary)
    KIND_TO_TIER,
    KINDS,
    MEMORY_TIERS,
    PROMOTED_FROM,
    STATUSES,
    TIER_MEANING,
    Kind,
    MemoryTier,
    Status,
    TruthMode,
)
from core.recall.lexical import STOPWORDS, fold

# Default rerank weights: cosine (calibrated) x weight[importance].
IMPORTANCE_WEIGHT: dict[int, float] = {1: 1.0, 2: 1.08, 3: 1.16, 4: 1.25, 5: 1.35}

_WORDS = re.compile(r"[^\W_]+")
_MEMORY_ID = re.compile(r"^[a-z0-9][a-z0-9._:-]{1,119}$")
_SCOPE = re.compile(r"^(global|user:[\w.-]+|chat:[\w.-]+|project:[\w.-]+)$")


class EntryIn(BaseModel):
    """An entry as written through the memory API; anything incomplete is refused."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    memory_id: str
    tier: MemoryTier
    kind: Kind
    canonical_text: str = Field(min_length=1, max_length=4000)
    embedding_text: str | None = None
    truth_mode: TruthMode = "asserted"
    scope: str = "global"
    importance: int = Field(1, ge=1, le=5)
    confidence: float = Field(ge=0.0, le=1.0)
    observations: int = Field(ge=1)
    topics: list[str] = Field(min_length=1)
    last_touched: datetime
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    status: Status = "active"
    sources: list[dict[str, Any]] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("memory_id")
    @classmethod
    def _memory_id(cls, value: str) -> str:
        if not _MEMORY_ID.match(value):
            raise ValueError(
                "memory_id must be a lowercase slug (letters, digits, . _ : -), e.g. pref.reply-length"
            )
        return value

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: str) -> str:
        if not _SCOPE.match(value):
            raise ValueError("scope must be global, user:<id>, chat:<id> or project:<name>")
        return value

    @field_validator("topics")
    @classmethod
    def _topics(cls, value: list[str]) -> list[str]:
        cleaned = list(dict.fromkeys(t.strip().lower() for t in value if t and t.strip()))
        if not cleaned:
            raise ValueError("at least one topic is required")
        return cleaned

    @model_validator(mode="after")
    def _defaults(self) -> EntryIn:
        if not self.embedding_text:
            self.embedding_text = self.canonical_text
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError("valid_to is before valid_from")
        return self


def topics_from_text(text: str, limit: int = 3) -> list[str]:
    """A few topic tags from the longest distinctive words of a text (used when none are given)."""
    words = re.findall(r"[^\W\d_][\w'-]{2,}", text.lower())
    seen = [w for w in dict.fromkeys(words) if fold(w) not in STOPWORDS]
    ranked = sorted(seen, key=len, reverse=True)[:limit]
    return ranked or ["general"]


# Negation words are stopwords for search but carry the meaning of an id: "n'aime pas la
# coriandre" must never read (or collide) as "aime la coriandre". French "ne"/"n'" always comes
# with one of these, so it is left out. They do not count towards the id's word budget.
NEGATIONS = frozenset(
    ("pas", "jamais", "plus", "aucun", "aucune", "rien", "personne", "ni", "sans",
     "not", "never", "no", "nor", "none", "nothing", "nobody", "without", "cannot")
)  # fmt: skip
# English contractions: "don't" would otherwise split into the stopwords "don" and "t".
_CONTRACTION = re.compile(r"\b(\w+?)n['’]t\b")
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}  # can't, won't, shan't


def slug_for(kind: str, text: str, max_words: int = 3) -> str:
    """A readable memory_id from a kind and a text, e.g. `pref.reply-short`; negations stay."""
    prefix = {"preference": "pref", "constraint": "rule", "decision": "decision"}.get(kind, kind)
    plain = _CONTRACTION.sub(lambda m: f"{_CONTRACTED.get(m[1], m[1])} not", text.lower())
    words, content = [], 0
    for word in re.findall(r"[a-z0-9]+", _ascii(plain)):
        if word in NEGATIONS:
            if not words or words[-1] != word:
                words.append(word)
        elif word not in STOPWORDS:
            if content == max_words:
                break
            words.append(word)
            content += 1
    return f"{prefix}.{'-'.join(words) or 'note'}"


def text_key(text: str) -> str:
    """A text as its words only (case, accents and punctuation folded): equal keys, same memory."""
    return " ".join(_WORDS.findall(fold(text)))


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
