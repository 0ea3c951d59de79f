"""The shape of a learning candidate, as extractors produce it and proposals store it."""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.memory.vocabulary import KIND_TO_TIER, Kind, MemoryTier

Temporality = Literal["permanent", "current", "dated", "expiring"]
Authority = Literal["model", "operator", "heuristic", "job"]


class Candidate(BaseModel):
    """Something that might be worth remembering, with where it came from."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    text: str = Field(min_length=3, max_length=1000)
    kind: Kind
    tier: MemoryTier | None = None
    scope: str = "global"
    topics: list[str] = Field(default_factory=list)
    importance: int = Field(2, ge=1, le=5)
    confidence: float = Field(0.6, ge=0.0, le=1.0)
    temporality: Temporality = "permanent"
    valid_from: date | None = None
    valid_to: date | None = None
    memory_id: str | None = None
    source_capture_ids: list[str] = Field(default_factory=list)
    authority: Authority = "model"
    reason: str = ""
    # The environment tier: which sub-bucket (people, services, tools, places, documents...)
    # and what to expect next time ("answers in about 2 days").
    bucket: str | None = Field(None, max_length=40)
    prediction: str | None = Field(None, max_length=300)
    # How many times it was observed (the evidence a job found; extraction leaves it at 1).
    observations: int = Field(1, ge=1, le=10_000)

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, value: str | None) -> str | None:
        if value is None:
            return None
        cleaned = re.sub(r"[^a-z0-9-]+", "-", value.strip().lower()).strip("-")
        return cleaned or None

    @field_validator("topics")
    @classmethod
    def _topics(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(t.strip().lower() for t in value if t and t.strip()))[:8]

    @model_validator(mode="after")
    def _tier(self) -> Candidate:
        if self.tier is None:
            self.tier = KIND_TO_TIER[self.kind]
        if self.tier == "environment" and self.bucket is None:
            self.bucket = self.topics[0] if self.topics else "general"
        return self


class ExtractionOutput(BaseModel):
    """What the extraction prompt must return."""

    candidates: list[Candidate] = Field(default_factory=list)
