"""The learner: extract candidates after an exchange (or over the archive), honour consent,
score them (A-MAC), find how they relate to memory, and file them as proposals.

Only operator authority ("remember that…", `elora remember`) or the opt-in `auto` policy for
recommended proposals writes to the canon; everything else waits for review.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.archive.speakers import speaker_label
from core.errors import EloraError
from core.learning import admission
from core.learning.attribution import about_speaker, mentions
from core.learning.candidates import Candidate, ExtractionOutput
from core.learning.consent import (
    Consent,
    ConsentRefused,
    add_never_store_rule,
    blocked_by_rule,
    is_bare_instruction,
    never_store_patterns,
    read_consent,
    withhold_previous,
)
from core.learning.contradictions import RELATED, classify_relation
from core.learning.heuristics import heuristic_candidates
from core.offload import run_blocking
from core.recall.classifier import is_chitchat
from core.storage.models import Proposal

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)


@dataclass
class LearningReport:
    """What learning did for one exchange or batch (stored in the trace)."""

    extractor: str = "none"
    candidates: int = 0
    proposals: list[str] = field(default_factory=list)
    approved: list[str] = field(default_factory=list)
    blocked: int = 0
    suppressed: bool = False
    withdrawn: int = 0  # open proposals withdrawn by a bare "don't remember this"
    rule: str | None = None
    failure: str | None = None
    skipped: str | None = None  # why no extraction ran (the exchange had nothing to learn)
    batched: int = 0  # exchanges read by this report's extraction call (a chat's burst)

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return dict(self.__dict__)


# Exchanges of one chat read by one extraction call at most (a burst of messages).
BATCH = 4
Chat = tuple[str, str]  # (surface, chat id)


@dataclass
class Carried:
    """A chat's exchanges waiting to be read together, and what was filed from them already."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    filed: set[str] = field(default_factory=set)  # lowercased texts filed at once

    @property
    def exchanges(self) -> int:
        """How many exchanges (each begins with its user message)."""
        return sum(m["role"] == "user" for m in self.messages)

    def add(self, messages: list[dict[str, Any]], filed: set[str]) -> None:
        """One more exchange."""
        self.messages.extend(messages)
        self.filed |= filed


class Learner:
    """Turns what was said into proposals, under the operator's consent."""

    def __init__(self, services: Services):
        self.services = services
        self.settings = services.settings
        self._carry: dict[Chat, Carried] = {}  # exchanges waiting for one extraction

    def extractor(self) -> str:
        """model, heuristic or off (auto picks model when one is configured)."""
        from core.routing.tiers import configured

        choice = self.settings.learning_extractor
        if choice == "auto":
            return "model" if configured(self.settings) else "heuristic"
        return choice

    async def after_exchange(
        self, text: str, capture_id: str | None, reply: str | None = None, private: bool = False,
        speaker: str | None = None, operator: bool = True, chat: Chat | None = None,
        defer: bool = False,
    ) -> LearningReport:  # fmt: skip
        """Learn from one message (and the reply it got); what someone other than the operator
        says is learned as being about them, by name.

        With `defer` (the surface already holds `chat`'s next message), the model's extraction
        waits to read this exchange together with the next ones: one LITE call for a burst
        (at most BATCH exchanges) instead of one each. What the operator asked to remember is
        filed at once all the same, and consent is read per message, as always."""
        report = LearningReport(extractor=self.extractor())
        carried = self._carry.pop(chat, None) if chat is not None else None
        if private or report.extractor == "off":
            report.extractor = "off" if not private else "private"
            await self._flush(carried, report)
            return report
        consent = read_consent(text)
        if consent.never_store and operator:
            rule = await run_blocking(
                add_never_store_rule, self.services, consent.never_store, capture_id
            )
            report.rule = rule.memory_id
        own: list[dict[str, Any]] = []
        if consent.suppress_turn:
            report.suppressed = True
            if capture_id and is_bare_instruction(text):
                report.withdrawn = withhold_previous(self.services, capture_id)
        elif report.extractor == "model" and is_chitchat(text):
            # "merci !", "ok", "salut": nothing to learn, so no LITE call (the reply to a
            # greeting says nothing about anyone either).
            report.skipped = "greeting or acknowledgement"
        else:
            own = [message(capture_id, "user", text, speaker=speaker, operator=operator)]
            if reply:
                own.append(message(None, "assistant", reply))
        if report.extractor != "model" or not (own or carried):
            await self._file(explicit_candidates(own), report)
            await self._flush(carried, report)
            return report
        batch = carried or Carried()
        if own:
            filed = [c for c in explicit_candidates(own) if c.authority == "operator"]
            await self._file(filed, report)
            batch.add(own, {c.text.lower() for c in filed})
        if defer and chat is not None and batch.exchanges < BATCH:
            self._carry[chat] = batch
            report.skipped = report.skipped or "batched: learned with the chat's next message"
            return report
        # Only what was kept may have been withheld since: this exchange's consent was just read.
        await self._flush(batch, report, recheck=carried is not None)
        return report

    async def flush(self, chat: Chat | None = None) -> LearningReport:
        """Extract what was kept for `chat` (every chat when None): its next message will not
        come soon, or the process is stopping."""
        report = LearningReport(extractor=self.extractor())
        for key in [chat] if chat is not None else list(self._carry):
            await self._flush(self._carry.pop(key, None), report)
        return report

    async def _flush(
        self, batch: Carried | None, report: LearningReport, recheck: bool = True
    ) -> None:
        """One extraction call over a batch of exchanges, minus the messages withheld since
        they were kept (`recheck`)."""
        if batch is None or not batch.messages:
            return
        messages = batch.messages
        if recheck:
            messages = await run_blocking(_still_learnable, self.services, messages)
        if not any(m["role"] == "user" for m in messages):
            return
        report.batched = batch.exchanges
        found = await self._extract(messages, report, explicit=False)
        await self._file([c for c in found if c.text.lower() not in batch.filed], report)

    async def _extract(
        self, messages: list[dict[str, Any]], report: LearningReport, explicit: bool = True
    ) -> list[Candidate]:
        """Candidates from the model (validated) or the heuristics; explicit ones always
        (unless `explicit` is False: they were filed already)."""
        found_explicit = explicit_candidates(messages) if explicit else []
        if report.extractor != "model":
            return found_explicit
        from core.prompts import render

        prompt = render("extraction", messages=messages, today=self.services.clock.now().date())
        operator = [c for c in found_explicit if c.authority == "operator"]
        try:
            raw = await self.services.llm.complete_text(
                "LITE", [{"role": "user", "content": prompt}]
            )
            found = attribute(_parse_extraction(raw, messages), messages)
        except (EloraError, ValueError, ValidationError) as exc:
            report.failure = f"extraction failed: {str(exc)[:300]}"
            log.warning("candidate extraction failed: %s", exc)
            return operator
        texts = {c.text.lower() for c in operator}
        return operator + [c for c in found if c.text.lower() not in texts]

    async def _file(self, candidates: list[Candidate], report: LearningReport) -> None:
        if not candidates:
            return
        patterns = await run_blocking(never_store_patterns, self.services)
        report.candidates += len(candidates)
        for candidate in candidates:
            if blocked_by_rule(candidate.text, patterns):
                report.blocked += 1
                continue
            try:
                proposal = await self.submit(candidate)
            except ConsentRefused:  # forgotten, or drawn from a withheld message
                report.blocked += 1
                continue
            report.proposals.append(proposal.id)
            if proposal.status == "approved":
                report.approved.append(proposal.memory_id)

    async def submit(
        self,
        candidate: Candidate,
        origin: str = "extraction",
        captured_at: datetime | None = None,
        exclude_uuids: Collection[str] = (),
        extra: dict[str, Any] | None = None,
    ) -> Proposal:
        """Score a candidate, relate it to memory (except the entries in `exclude_uuids`), file
        it (with `extra` fields kept beside the candidate, e.g. a job's key); auto-approve when
        allowed."""
        from core.learning.review import approve

        services = self.services
        consent = await run_blocking(Consent.of, services)
        operator = candidate.authority == "operator"
        # Every path ends here (extraction, `elora learn`, the save_memory tool, jobs), so
        # consent holds even where no caller checked it first.
        if not operator and blocked_by_rule(candidate.text, consent.patterns):
            raise ConsentRefused("the operator asked never to store this subject (consent rule)")
        if await run_blocking(consent.withheld, candidate.source_capture_ids, rules=not operator):
            raise ConsentRefused("drawn from a message the operator withheld from learning")
        captured_at = captured_at or await run_blocking(
            self._captured_at, candidate.source_capture_ids
        )
        verdict = await run_blocking(
            admission.score, services, candidate, captured_at, exclude_uuids
        )
        relation = None
        conflict_uuid = None
        if verdict.nearest_uuid and verdict.nearest_similarity >= RELATED:
            found = await run_blocking(services.memory.by_uuids, [verdict.nearest_uuid])
            old = found.get(verdict.nearest_uuid)
            if old is not None:
                model = services.llm if self.extractor() == "model" else None
                relation, how = await classify_relation(
                    candidate.text, old, verdict.nearest_similarity, model
                )
                if relation != "none":
                    conflict_uuid = old.uuid
                    verdict.reasons.append(f"relation to {old.memory_id}: {relation} ({how})")
        status = verdict.status
        if relation == "contradict" and status == "recommended":
            status = "pending"  # contradictions always wait for the operator
        proposal = await run_blocking(
            services.proposals.create,
            text=candidate.text,
            kind=candidate.kind,
            tier=candidate.tier,
            candidate={**candidate.model_dump(mode="json"), **(extra or {})},
            authority=candidate.authority,
            origin=origin,
            memory_id=candidate.memory_id,
            source_capture_ids=candidate.source_capture_ids,
            status=status,
            scores=verdict.scores,
            total=verdict.total,
            reasons=verdict.reasons,
            conflict_uuid=conflict_uuid,
            conflict_relation=relation if conflict_uuid else None,
        )
        auto = self.settings.learning_policy == "auto" and status == "recommended"
        if operator or auto:
            await run_blocking(approve, services, proposal.id)
            return await run_blocking(services.proposals.get, proposal.id)
        return proposal

    def _captured_at(self, capture_ids: list[str]) -> datetime | None:
        return self.services.archive.captures.latest_sent_at(capture_ids)


def message(
    capture_id: str | None, role: str, text: str, *, speaker: str | None = None,
    operator: bool | None = True, date: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One message as extraction reads it: who said it, and whether that was the operator."""
    return {
        "capture_id": capture_id,
        "role": role,
        "text": text,
        "date": date,
        "speaker": speaker_label(speaker),
        "operator": operator if role == "user" else False,
    }


def contact_name(m: dict[str, Any]) -> str | None:
    """The name to attribute a user message to, or None when it is the operator's."""
    if m["role"] != "user" or m.get("operator") is True:
        return None
    return m.get("speaker")


def explicit_candidates(messages: list[dict[str, Any]]) -> list[Candidate]:
    """What the heuristics find in the user messages ("remember that…" is operator authority)."""
    return [
        c
        for m in messages
        if m["role"] == "user"
        for c in heuristic_candidates(m["text"], m["capture_id"], contact_name(m))
    ]


def _still_learnable(services: Services, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of a batch, without those withheld or forgotten since they were kept (and
    the replies they got)."""
    ids = [m["capture_id"] for m in messages if m["capture_id"]]
    withheld = {i for i, _, flag in services.archive.captures.consent_flags(ids) if flag}
    kept, dropping = [], False
    for m in messages:
        if m["role"] == "user":
            dropping = m["capture_id"] in withheld
        if not dropping:
            kept.append(m)
    return kept


def attribute(candidates: list[Candidate], messages: list[dict[str, Any]]) -> list[Candidate]:
    """Name the speaker in a candidate drawn only from one contact's messages (the model may
    have kept their "I")."""
    by_capture = {m["capture_id"]: m for m in messages if m["capture_id"]}
    for c in candidates:
        names = {contact_name(by_capture[i]) for i in c.source_capture_ids if i in by_capture}
        if len(names) == 1 and (name := names.pop()) and not mentions(c.text, name):
            c.text = about_speaker(c.text, name)
    return candidates


def _parse_extraction(raw: str, messages: list[dict[str, Any]]) -> list[Candidate]:
    """Validate the model's JSON; map each candidate's message number to its capture."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the extraction output")
    data = json.loads(raw[start : end + 1])
    items = data.get("candidates") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue  # left for the schema to refuse: a bare string is not a candidate
        item.pop("observations", None)  # evidence is counted from the messages, not claimed
        numbers = item.pop("messages", None) or item.pop("message", None) or []
        numbers = numbers if isinstance(numbers, list) else [numbers]
        ids = [
            messages[n - 1]["capture_id"]
            for n in numbers
            if isinstance(n, int) and 1 <= n <= len(messages) and messages[n - 1]["capture_id"]
        ]
        item["source_capture_ids"] = (
            ids or [m["capture_id"] for m in messages if m["capture_id"]][:1]
        )
        item["authority"] = "model"
    return ExtractionOutput.model_validate(data).candidates
