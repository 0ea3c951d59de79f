"""The evidence pack: a small, bounded, sourced selection of memory for one request (L0-L3).

L0 identity wake-up (always), L1 operational essentials, L2 focused typed recall (maintained
entries first, archive chunks as secondary evidence), L3 deep search only when needed. No
layer and no pack ever exceeds its token budget; what was cut is reported, and so is what is
missing. `EvidencePack.to_json()` is the public contract printed by `elora context --json`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from core.embeddings import embed_queries
from core.errors import EloraError, VectorStoreUnavailable
from core.memory.tier_policy import judge, matching_predictions
from core.offload import beside
from core.recall.classifier import Classification, classify
from core.recall.crosslingual import other_language
from core.recall.events import as_written, date_event
from core.recall.evidence import UNKNOWN, ArchiveEvidence, Unknown
from core.recall.items import entry_item, item_tokens
from core.recall.lexical import terms
from core.recall.participants import mixed_vector, speaker_texts
from core.recall.scope import search_scope, visible_chats
from core.recall.timeparse import TimeWindow, anchored
from core.recall.tokens import truncate_to_tokens
from core.recall.vocabulary import Vocabulary
from core.storage.models import MemoryEntry

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

PACK_VERSION = 1
LAYER_TITLES = {
    "L0": "identity wake-up",
    "L1": "operational essentials",
    "L2": "focused recall",
    "L3": "deep search",
}
L0_MAX, L1_MAX = 300, 800
ENTRY_MIN_SCORE = 0.25
ARCHIVE_MIN_SCORE = 0.25
WEAK_SCORE = 0.45
L1_MANIFEST = 40
L1_PREDICTIONS = 200  # environment entries read to find those a task names
RECENCY_HALF_LIFE_DAYS = 90


@dataclass
class Layer:
    """One layer of the pack and its budget."""

    name: str
    budget: int
    ran: bool = False
    used: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The layer as plain data."""
        return {
            "title": LAYER_TITLES[self.name],
            "ran": self.ran,
            "budget": self.budget,
            "used": self.used,
            "items": self.items,
        }


@dataclass
class EvidencePack:
    """What one request may see of memory, and what it may not (cut, missing, degraded)."""

    question: str
    classification: Classification
    budget: int
    layers: dict[str, Layer]
    chat_id: str | None = None
    user_id: str | None = None
    time_window: TimeWindow | None = None
    degraded: bool = False
    degraded_reason: str | None = None
    cut: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    advice: dict[str, Any] = field(default_factory=dict)
    generated_at: datetime | None = None

    @classmethod
    def unavailable(
        cls, question: str, classification: Classification, budget: int, *,
        chat_id: str | None, user_id: str | None, now: datetime, why: str,
    ) -> EvidencePack:  # fmt: skip
        """The pack of a request whose recall failed: nothing recalled, and it says so (the
        model is told its memory could not be read rather than that it holds nothing)."""
        return cls(
            question=question, classification=classification, budget=budget, layers={},
            chat_id=chat_id, user_id=user_id, time_window=classification.time_window,
            degraded=True, degraded_reason=why, generated_at=now,
            missing=["memory could not be read for this request"],
            advice={"reasons": [], "clarify": False, "deep_search": False},
        )  # fmt: skip

    @property
    def used(self) -> int:
        """Tokens used by every layer together."""
        return sum(layer.used for layer in self.layers.values())

    def items(self) -> list[dict[str, Any]]:
        """Every item, layer by layer."""
        return [item for layer in self.layers.values() for item in layer.items]

    def item_ids(self) -> list[str]:
        """Ids of every item (for traces)."""
        return [item["id"] for item in self.items()]

    def to_json(self) -> dict[str, Any]:
        """The documented JSON contract (see README, "Evidence pack JSON")."""
        return {
            "version": PACK_VERSION,
            "question": self.question,
            "chat_id": self.chat_id,
            "user_id": self.user_id,
            "generated_at": self.generated_at.isoformat() if self.generated_at else None,
            "classification": self.classification.to_json(),
            "time_window": self.time_window.to_json() if self.time_window else None,
            "degraded": self.degraded,
            "degraded_reason": self.degraded_reason,
            "budget": {"total": self.budget, "used": self.used},
            "layers": {name: layer.to_json() for name, layer in self.layers.items()},
            "cut": self.cut,
            "missing": self.missing,
            "advice": self.advice,
        }


class PackBuilder:
    """Assembles one pack; every layer spends from the same total budget, L0 first."""

    def __init__(
        self,
        services: Services,
        question: str,
        *,
        chat_id: str | None = None,
        user_id: str | None = None,
        budget: int | None = None,
        classification: Classification | None = None,
        exclude_capture_ids: list[str] | None = None,
    ):
        self.services = services
        self.exclude = set(exclude_capture_ids or [])
        self.question = question
        self.now = services.clock.now()
        self.total = int(budget or services.settings.pack_budget_tokens)
        self.classification = classification or classify(question, self.now)
        self.chat_id = str(chat_id) if chat_id is not None else None
        self.user_id = str(user_id) if user_id is not None else None
        self.terms = set(terms(question))
        self.seen: set[str] = set()
        self.chats = visible_chats(services, self.user_id)
        self.archive: ArchiveEvidence | None = None
        self.searched: ArchiveEvidence | None = None  # the archive search, once it ran
        self.query_vector = None
        # Worked out with the query's embedding (_embed_query) when it ran, else by the search.
        self.scope: list[str] | Unknown | None = UNKNOWN
        self.search_vector: Any = UNKNOWN
        self.also: Any = UNKNOWN  # a present state's vector in the archive's other language
        self.anchor_vector = None  # the vector of the event the period is anchored on
        self.vocabulary = Vocabulary(services)  # word counts, looked up once per pack
        self.stamp: int | None = None  # the memory's stamp when the pack began (memory.standing)
        self.pack = EvidencePack(
            question=question,
            classification=self.classification,
            budget=self.total,
            layers={},
            chat_id=self.chat_id,
            user_id=self.user_id,
            time_window=self.classification.time_window,
            generated_at=self.now,
        )

    # -- budget ----------------------------------------------------------------------------

    def _remaining(self) -> int:
        return self.total - self.pack.used

    def _add(self, layer: Layer, item: dict[str, Any]) -> bool:
        if item["id"] in self.seen:
            return False
        cost = item_tokens(item)
        if layer.used + cost > layer.budget or cost > self._remaining():
            self.pack.cut.append(
                {"id": item["id"], "layer": layer.name, "tokens": cost, "reason": "budget"}
            )
            return False
        item["layer"] = layer.name
        item["tokens"] = cost
        layer.items.append(item)
        layer.used += cost
        self.seen.add(item["id"])
        return True

    def _layer(self, name: str, budget: int) -> Layer:
        layer = Layer(name, max(0, min(budget, self._remaining())))
        self.pack.layers[name] = layer
        return layer

    # -- assembly --------------------------------------------------------------------------

    def build(self) -> EvidencePack:
        """Run the layers the classification asks for and fill in advice."""
        need = self.classification.memory_need
        self.started = time.monotonic()
        # The question is embedded while L0 and L1 read their entries (neither needs it).
        embedding = beside(self._embed_query, need)
        self.stamp = self.services.standing.stamp()  # what L0 and L1 read may be kept
        self._l0()
        l1 = self._layer("L1", min(L1_MAX, int(self.total * 0.3)) if need != "none" else 0)
        if need != "none":
            self._l1(l1)
        embedding.result()
        deep = need == "L3"
        focused = need in ("L2", "L3")
        l2 = self._layer("L2", int(self._remaining() * (0.55 if deep else 1.0)) if focused else 0)
        entries_found = archive_found = 0
        best = 0.0
        if focused:
            self._resolve_anchor()
            entries_found, archive_found, best = self._l2(l2)
        l3 = self._layer("L3", self._remaining() if deep else 0)
        if deep:
            archive_found += self._l3(l3)
        failure = self.services.vectorspace.failure_since(self.started)
        if failure and self.query_vector is not None:  # a search fell back to full text
            self._degrade(failure)
        self._advise(need, entries_found, archive_found, best)
        return self.pack

    def _embed_query(self, need: str) -> None:
        """The question's vector and, for the archive search, the question in the words of the
        speakers it names (core.recall.participants) or, for a present state, in the archive's
        other language (core.recall.crosslingual); and the event its period is anchored on
        (_resolve_anchor): one engine call for all of them (each call costs its own share)."""
        if need in ("none", "L0-L1"):
            return
        present = self.classification.present_state
        others: list[str] = []
        if not present:  # a present state keeps its own vector (evidence.py)
            self.scope = search_scope(self.services, self.chats)
            others = speaker_texts(self.services, self.question, self.scope)
        else:
            rendered = other_language(self.question, self.vocabulary)
            others = [rendered] if rendered is not None else []
        window = self.classification.time_window
        event = [as_written(self.question, window.anchor)] if window and window.anchor else []
        try:
            self.services.vectorspace.ensure_readable()
            vectors = embed_queries(self.services.embedder, [self.question, *others, *event])
        except VectorStoreUnavailable as exc:
            self._degrade(str(exc))
            return
        except EloraError as exc:
            self._degrade(f"embeddings unavailable ({exc})")
            return
        self.query_vector = vectors[0]
        if event:
            self.anchor_vector, vectors = vectors[-1], vectors[:-1]
        if present:
            self.also = vectors[1] if others else None
        else:
            self.search_vector = mixed_vector(vectors[0], vectors[1:])

    def _degrade(self, why: str) -> None:
        """Recall runs on full text, time and provenance only, and the pack says why."""
        if not self.pack.degraded:
            self.pack.degraded = True
            self.pack.degraded_reason = f"{why}; lexical + time + provenance only"
            log.warning("evidence pack degraded: %s", why)

    def _l0(self) -> None:
        layer = self._layer("L0", min(L0_MAX, int(self.total * 0.15)))
        layer.ran = True
        identity = self._identity_text()
        if identity:
            text = truncate_to_tokens(identity, max(0, layer.budget // 2))
            if text:
                path = str(self._identity_path())
                self._add(layer, {
                    "id": "identity", "source_type": "identity", "tier": "identity",
                    "tier_meaning": "identity", "kind": "identity", "text": text, "score": 1.0,
                    "confidence": None, "dates": {}, "sources": [{"file": path}],
                    "contradictions": [], "truncated": text != identity.strip(),
                })  # fmt: skip
        axioms = self._entries(
            "axioms", (MemoryEntry.tier == "personalized") & (MemoryEntry.importance == 5), 10
        )
        # Every item carries its known contradictions.
        links, related = self._links(axioms, standing=True)
        for entry in axioms:
            self._add(layer, entry_item(entry, 1.0, links, related, "importance 5 preference"))

    def _identity_path(self) -> Path:
        return self.services.settings.identity_file or self.services.settings.home / "identity.md"

    def _identity_text(self) -> str:
        path = self._identity_path()
        try:
            return path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            self.pack.missing.append(f"no identity file at {path}")
        except (OSError, UnicodeDecodeError) as exc:
            self.pack.missing.append(f"identity file unreadable: {exc}")
        return ""

    def _entries(self, key: str, condition, limit: int) -> list[MemoryEntry]:
        """Active entries meeting a condition that does not depend on the question (`key` names
        it), best first, visible to this pack's reader (kept between packs: memory.standing)."""
        stmt = (
            select(MemoryEntry)
            .where(MemoryEntry.status == "active", condition)
            .order_by(
                col(MemoryEntry.importance).desc(),
                col(MemoryEntry.confidence).desc(),
                col(MemoryEntry.last_touched).desc(),
            )
            .limit(limit)
        )
        rows = self.services.standing.entries(
            self.stamp, (key, limit), lambda session: list(session.exec(stmt))
        )
        return [r for r in rows if self._visible(r)]

    def _visible(self, entry: MemoryEntry) -> bool:
        """Entries scoped to another user or chat stay out of this pack; for anyone but the
        operator, so do entries learned from chats they cannot recall (or from nowhere they
        took part in: the operator's own canon)."""
        kind, _, value = entry.scope.partition(":")
        if kind == "user" and self.user_id is not None:
            return value == self.user_id
        if kind == "chat" and self.chat_id is not None:
            return value == self.chat_id
        if self.chats is None:
            return True
        chats = {str(s["chat_id"]) for s in entry.sources if s.get("chat_id") is not None}
        return bool(chats) and chats <= set(self.chats)

    def _l1(self, layer: Layer) -> None:
        layer.ran = True
        # The manifest: a small slice read through the (status, importance) order, never the store.
        manifest = self._entries(
            "manifest",
            # Traces and predictions are recalled for the task they match (L2), not as essentials.
            col(MemoryEntry.tier).not_in(("episodic", "environment"))
            & (MemoryEntry.importance >= 2),
            L1_MANIFEST,
        )

        def essential(entry: MemoryEntry) -> float:
            age = max(0.0, (self.now - entry.last_touched).total_seconds() / 86400)
            recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
            return entry.importance / 5 * (0.5 + 0.5 * recency) * entry.confidence

        links, related = self._links(manifest, standing=True)
        for entry in sorted(manifest, key=essential, reverse=True):
            self._add(layer, entry_item(entry, essential(entry), links, related, "essential"))
        # Predictions about what this task touches (core.memory.tier_policy) come with it.
        found = self._entries("predictions", MemoryEntry.tier == "environment", L1_PREDICTIONS)
        named = matching_predictions(found, self.terms)
        if not named:
            return
        # Links of the predictions kept only: an item reads the links of its own entry.
        links, related = self._links([entry for entry, _ in named])
        for entry, verdict in named:
            score = entry.confidence * verdict.factor
            self._add(layer, entry_item(entry, score, links, related, verdict.reason))

    def _resolve_anchor(self) -> None:
        window = self.pack.time_window
        if window is None or not window.anchor:
            return
        moment = date_event(
            self.services, self.question, window.anchor, embed=self.query_vector is not None,
            chats=self.chats, visible=self._visible, min_score=ENTRY_MIN_SCORE,
            vector=self.anchor_vector,
        )  # fmt: skip
        if moment is None:
            self.pack.advice.setdefault("reasons", []).append(
                f"could not date '{window.anchor}': ask when it happened"
            )
            self.pack.advice["clarify"] = True
            self.pack.time_window = None
            return
        self.pack.time_window = anchored(window, moment)

    def _l2(self, layer: Layer) -> tuple[int, int, float]:
        layer.ran = True
        window = self.pack.time_window
        # The archive is searched while the entries are (its items come after theirs).
        searching = beside(self._search_archive)
        hits, degraded = self.services.memory.search(
            self.question, limit=8, query_vector=self.query_vector
        )
        if degraded and not self.pack.degraded:
            self.pack.degraded = True
            self.pack.degraded_reason = "vector search failed; lexical + time + provenance only"
        cued = set(self.classification.tiers)
        ranked = []
        already = 0
        for hit in hits:
            if not self._visible(hit.entry):
                continue
            if hit.entry.memory_id in self.seen:  # already in L0/L1: relevant, not repeated
                already += hit.score >= ENTRY_MIN_SCORE
                continue
            verdict = judge(hit.entry, self.terms, window)
            if not verdict.keep:
                self.pack.cut.append(
                    {"id": hit.entry.memory_id, "layer": "L2", "reason": verdict.reason}
                )
                continue
            score = hit.score * verdict.factor * (1.1 if hit.entry.tier in cued else 1.0)
            if score >= ENTRY_MIN_SCORE or self.pack.degraded:
                ranked.append((score, hit.entry, verdict.reason))
        ranked.sort(key=lambda r: r[0], reverse=True)
        links, related = self._links([e for _, e, _ in ranked])
        entries = already + sum(
            self._add(layer, entry_item(entry, score, links, related, reason))
            for score, entry, reason in ranked
        )
        searching.result()
        archive = self._archive(layer, "L2")
        best = max(
            [
                ranked[0][0] if ranked else 0.0,
                *[h.score for h in hits if h.entry.memory_id in self.seen],
            ]
        )
        return entries, archive, best

    def _links(self, entries: list[MemoryEntry], standing: bool = False):
        """The links touching these entries, and the entries at their other ends (`standing`:
        the same entries for every question, kept between packs: memory.standing)."""
        uuids = [e.uuid for e in entries]

        def read():
            links = self.services.memory.links_of(uuids)
            others = {link.from_uuid for link in links} | {link.to_uuid for link in links}
            return links, self.services.memory.by_uuids(list(others))

        return self.services.standing.links(self.stamp, uuids, read) if standing else read()

    def _search_archive(self) -> ArchiveEvidence:
        """The pack's one archive search (once the query vector and the period are known)."""
        archive = ArchiveEvidence(
            self.services, self.question, self.query_vector, chats=self.chats,
            present_state=self.classification.present_state, exclude=self.exclude,
            scope=self.scope, search_vector=self.search_vector, also=self.also,
            vocabulary=self.vocabulary,
        )  # fmt: skip
        archive.search(self.pack.time_window, ARCHIVE_MIN_SCORE)
        self.searched = archive
        return archive

    def _archive(self, layer: Layer, stage: str, min_score: float = ARCHIVE_MIN_SCORE) -> int:
        """Archive evidence: the turns the scores justify (see selection), parts of long texts."""
        if self.archive is None:
            self.archive = self.searched or self._search_archive()
            self.pack.missing.extend(self.archive.missing)
        added = 0
        for item, evidence in self.archive.items(stage, min_score):
            if self._add(layer, item):
                added += 1
                self.archive.shown(evidence)
        return added

    def _l3(self, layer: Layer) -> int:
        layer.ran = True
        return self._archive(layer, "L3", min_score=ARCHIVE_MIN_SCORE * 0.6)

    def _advise(self, need: str, entries: int, archive: int, best: float) -> None:
        advice = self.pack.advice
        reasons = advice.setdefault("reasons", [])
        advice.setdefault("clarify", False)
        advice["deep_search"] = False
        if need not in ("L2", "L3"):
            return
        subject = ", ".join(sorted(self.terms)[:6]) or self.question
        if entries == 0:
            self.pack.missing.append(f"no maintained memory about: {subject}")
        if archive == 0:
            self.pack.missing.append(f"no archived message about: {subject}")
        if self.pack.degraded:
            self.pack.missing.append("semantic search unavailable (degraded)")
        if need == "L2" and (entries == 0 or best < WEAK_SCORE):
            advice["deep_search"] = True
            reasons.append("focused recall is weak: a deep search (L3) may find more")
        if entries == 0 and archive == 0 and len(self.terms) < 2:
            advice["clarify"] = True
            reasons.append("the question is too vague to search memory: ask for details")


def build_pack(services: Services, question: str, **options: Any) -> EvidencePack:
    """Assemble the evidence pack for a question (see PackBuilder for the options)."""
    return PackBuilder(services, question, **options).build()
