"""The archive's side of a pack: one search per pack, evidence chosen by stage (L2, then L3
deeper), the newest statement first for present-state questions, never a message twice."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from core.recall.archive_search import attach_neighbours
from core.recall.crosslingual import other_vector
from core.recall.items import archive_item, evidence_item
from core.recall.participants import speaker_free_vector
from core.recall.scope import search_scope
from core.recall.selection import Evidence, attach_context, choose, group
from core.recall.timeparse import TimeWindow
from core.recall.turn_search import Found, search_turns
from core.recall.updates import latest_first
from core.recall.vocabulary import Vocabulary

if TYPE_CHECKING:
    from core.services import Services


class Unknown(Enum):
    """Not worked out yet (None is an answer: every chat, no vector)."""

    UNKNOWN = "unknown"


UNKNOWN = Unknown.UNKNOWN


class ArchiveEvidence:
    """Searches the archive once for a question and hands out its evidence stage by stage."""

    def __init__(
        self,
        services: Services,
        question: str,
        query_vector: np.ndarray | None,
        *,
        chats: list[str] | None,
        present_state: bool,
        exclude: set[str],
        scope: list[str] | Unknown | None = UNKNOWN,
        search_vector: np.ndarray | Unknown | None = UNKNOWN,
        also: np.ndarray | Unknown | None = UNKNOWN,
        vocabulary: Vocabulary | None = None,
    ):
        self.services = services
        self.question = question
        self.allowed = set(chats) if chats is not None else None
        # None: every chat is the user's (`scope`: search_scope's answer, when already known).
        self.chats = search_scope(services, chats) if scope is UNKNOWN else scope
        # The speakers a question names are matched on who said a turn, not by meaning; a
        # present-state question keeps its own vector: it asks for one statement of a fact
        # (where the name often stands in for a subject: "Sam's job"), not for all they said.
        # `search_vector`: that vector, when the pack embedded it with the question at once.
        self.present_state = present_state
        if present_state:
            self.query_vector = query_vector
        elif search_vector is not UNKNOWN:
            self.query_vector = search_vector
        else:
            self.query_vector = speaker_free_vector(services, question, query_vector, self.chats)
        self.exclude = exclude  # capture ids: the request's own message is no evidence
        self.vocabulary = vocabulary or Vocabulary(services)  # word counts, once per pack
        # A present state may have been stated in the archive's other language (`also`: the
        # question's vector in it, when the pack embedded it with the question at once).
        if not present_state or query_vector is None:
            self.also = None
        elif also is not UNKNOWN:
            self.also = also
        else:
            self.also = other_vector(services, question, self.vocabulary)
        self.found: Found | None = None
        self.history: dict[int, list] = {}  # older statements of a current one (updates.py)
        self.shown_turns: set[int] = set()
        self.missing: list[str] = []

    def search(self, window: TimeWindow | None, floor: float) -> None:
        """Turns for the question in its period; if the period holds nothing, at any date.

        People misdate things ("last year" said of the year before): an empty period is
        reported and the evidence taken from other dates rather than none at all.
        """
        found = self._turns(window)
        if (
            window is not None
            and not found.parts
            and not any(t.score >= floor for t in found.turns)
        ):
            self.missing.append(f"nothing archived in {window.label}: evidence from other dates")
            found = self._turns(None)
        if self.present_state:
            found.turns, self.history = latest_first(
                self.services, self.question, self.query_vector, found.turns, self.chats,
                self.vocabulary, self.also,
            )  # fmt: skip
        self.found = found

    def _may(self, chat_id: str) -> bool:
        """Whether the request may recall this chat: an unscoped search (`chats` None for a
        guest in every chat) finds chats that appeared after the scope was looked at."""
        return self.allowed is None or chat_id in self.allowed

    def _turns(self, window: TimeWindow | None) -> Found:
        return search_turns(
            self.services, self.question, self.query_vector, window=window, chats=self.chats,
            vocabulary=self.vocabulary, alone=self.present_state, also=self.also,
        )  # fmt: skip

    def items(self, stage: str, floor: float) -> Iterator[tuple[dict[str, Any], Evidence | None]]:
        """This stage's items, best first, with the evidence each shows (None for a part of a
        long text); call `shown` for those the pack kept."""
        assert self.found is not None, "search() first"
        turns = [
            t
            for t in self.found.turns
            if t.rowid not in self.shown_turns
            and t.capture_id not in self.exclude
            and self._may(t.chat_id)
        ]
        chosen = group(choose(turns, stage, floor, self.services.embedder.calibrate))
        for evidence in chosen:
            older = self.history.get(evidence.first.rowid, [])
            evidence.history = [t for t in older if self._may(t.chat_id)]
        on_show = self.shown_turns | {t.rowid for e in chosen for t in e.turns}
        attach_context(self.services, chosen, on_show)
        for evidence in chosen:
            yield evidence_item(evidence), evidence
        for hit in self.found.parts:
            if hit.score < floor or not self._may(hit.chat_id) or self._excluded(hit.chunk_id):
                continue
            attach_neighbours(self.services, hit)
            yield archive_item(self.services, hit), None

    def shown(self, evidence: Evidence | None) -> None:
        """The pack kept this evidence: its messages are not shown again."""
        if evidence is not None:
            self.shown_turns.update(t.rowid for t in [*evidence.turns, *evidence.history])

    def _excluded(self, chunk_id: str) -> bool:
        if not self.exclude:
            return False
        return bool(self.exclude & set(self.services.archive.capture_ids_of(chunk_id)))
