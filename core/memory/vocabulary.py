"""The words of memory, defined once: tiers, kinds, truth modes and statuses (standard library
only, so the command line can offer them as choices without loading the schema)."""

from __future__ import annotations

from typing import Literal, get_args

MemoryTier = Literal["semantic", "episodic", "procedural", "personalized", "environment"]
Kind = Literal[
    "fact", "preference", "decision", "constraint", "event", "hypothesis", "pattern", "expression"
]
TruthMode = Literal["asserted", "observed", "inferred", "hypothesis"]
Status = Literal["active", "superseded", "deprecated", "faded"]

MEMORY_TIERS: tuple[str, ...] = get_args(MemoryTier)
KINDS: tuple[str, ...] = get_args(Kind)
STATUSES: tuple[str, ...] = get_args(Status)

# What each memory tier means when an item of it reaches a prompt.
TIER_MEANING: dict[str, str] = {
    "semantic": "pattern",
    "episodic": "trace",
    "procedural": "rule",
    "personalized": "preference",
    "environment": "prediction",
}
# Memory tier names shortened for a narrow table column.
TIER_SHORT: dict[str, str] = {
    "semantic": "sem",
    "episodic": "epi",
    "procedural": "proc",
    "personalized": "pers",
    "environment": "env",
}

# The link from a promoted entry to each entry it was promoted from (its roots).
PROMOTED_FROM = "promoted-from"

KIND_TO_TIER: dict[str, str] = {
    "fact": "semantic",
    "pattern": "semantic",
    "hypothesis": "semantic",
    "event": "episodic",
    "decision": "procedural",
    "constraint": "procedural",
    "preference": "personalized",
    "expression": "personalized",
}
