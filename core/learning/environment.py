"""The environment tier fills from what Elora observes about the operator's world and its own
tools: recurring outcomes and durations people write about (core.learning.outcomes), PDFs
that keep arriving without a text layer, models and tools that keep failing, kinds of request
that keep needing a stronger model.

Each recurring pattern becomes a proposal (kind `pattern`, tier `environment`) with a
sub-bucket, a prediction and its evidence (messages, or traces for Elora's own experience),
scored by A-MAC like every candidate and written only when approved. A pattern is proposed
once (keyed like promotions), so a rerun adds only what is new.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from core.errors import EloraError
from core.learning.attribution import about_speaker
from core.learning.candidates import Candidate
from core.learning.consent import Consent, ConsentRefused
from core.learning.outcomes import Outcome, read_outcomes

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

ORIGIN = "environment"
BATCH = 500
WINDOW_DAYS = 30  # Elora's own experience: the traces of the last month
MIN_FAILURES = 3
MIN_DOCUMENTS = 2
MIN_ESCALATIONS = 3
NO_TEXT = "document without text"
MAX_EVIDENCE = 20


@dataclass
class Pattern:
    """A recurring observation on its way to a proposal."""

    key: str
    bucket: str
    text: str
    prediction: str
    topics: list[str]
    captures: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    count: int = 1

    def candidate(self) -> Candidate:
        """The proposal's candidate: a pattern for the environment tier, with its evidence."""
        return Candidate(
            text=self.text[:1000],
            kind="pattern",
            tier="environment",
            topics=[self.bucket, *self.topics],
            importance=2,
            confidence=round(min(0.9, 0.5 + 0.1 * self.count), 2),
            authority="job",
            source_capture_ids=self.captures[-MAX_EVIDENCE:],
            bucket=self.bucket,
            prediction=self.prediction[:300],
            observations=self.count,
            reason=f"seen {self.count} time{'s' * (self.count > 1)}",
        )


# -- what people write ---------------------------------------------------------------------


def _messages(services: Services):
    """Every message consent lets a job read (no cap), batch after batch, in archive order."""
    after = 0
    while True:
        # Keyset paging: each batch is an index range, however large the archive.
        rows = services.archive.captures.learnable_messages(after, BATCH, min_chars=12)
        if not rows:
            return
        yield from (row[1:] for row in rows)
        after = rows[-1][0]


def _same_subject(a: Outcome, b: Outcome) -> bool:
    """Same bucket and the same subject: two shared words, or the only word of the shorter one
    ("le build de l'ingestion" and "the build"; not "le bureau de Lyon" and "le TGV de Lyon")."""
    if a.bucket != b.bucket:
        return False
    shared = set(a.terms) & set(b.terms)
    return len(shared) >= min(2, len(a.terms), len(b.terms))


def written_patterns(services: Services) -> list[Pattern]:
    """Recurring outcomes stated in the archive, grouped by bucket and subject."""
    consent = Consent.of(services)
    groups: list[tuple[Outcome, list[tuple[str, str | None, bool]]]] = []
    for capture_id, text, sender, is_operator in _messages(services):
        if not consent.allows(text):
            continue
        for outcome in read_outcomes(text):
            # Unknown (None) reads as the operator's: only a known contact is named.
            evidence = (capture_id, sender, is_operator is None or bool(is_operator))
            index = next((i for i, (o, _) in enumerate(groups) if _same_subject(o, outcome)), None)
            if index is None:
                groups.append((outcome, [evidence]))
            else:  # the latest words stand for the group
                groups[index] = (outcome, [*groups[index][1], evidence])
    patterns = []
    for outcome, evidence in groups:
        captures = list(dict.fromkeys(c for c, _, _ in evidence))
        speakers = {s for _, s, operator in evidence if not operator and s}
        text = outcome.text
        if len(speakers) == 1 and all(not op for _, _, op in evidence):
            text = about_speaker(text, speakers.pop())  # facts are about their speaker
        patterns.append(
            Pattern(
                f"outcome:{captures[0]}",
                outcome.bucket,
                text,
                outcome.prediction,
                list(outcome.terms),
                captures=captures,
                count=len(captures),
            )
        )
    return patterns


# -- what Elora experiences ----------------------------------------------------------------


def _recent_traces(services: Services):
    since = services.clock.now() - timedelta(days=WINDOW_DAYS)
    return services.traces.outcomes_since(since)


def experienced_patterns(services: Services) -> list[Pattern]:
    """Elora's own recurring outcomes over the last WINDOW_DAYS days of traces."""
    failures: dict[str, dict[str, Any]] = defaultdict(lambda: {"traces": [], "errors": [],
                                                              "instead": []})  # fmt: skip
    tools: dict[str, dict[str, Any]] = defaultdict(lambda: {"traces": [], "errors": [], "calls": 0})
    kinds: dict[str, dict[str, Any]] = defaultdict(lambda: {"traces": [], "escalated": [],
                                                           "to": []})  # fmt: skip
    documents: dict[str, list[str]] = defaultdict(list)
    for trace_id, classification, models, tool_calls, escalations, error in _recent_traces(
        services
    ):
        classification = json.loads(classification or "{}")
        if error == NO_TEXT:
            family = (classification.get("document") or {}).get("family") or "*.pdf"
            documents[family].append(trace_id)
            continue
        for call in json.loads(models or "[]"):
            attempts = call.get("attempts") or []
            answered = next((a["model"] for a in attempts if a.get("ok")), None)
            for attempt in attempts:
                if attempt.get("error") and attempt.get("model") != answered:
                    seen = failures[attempt["model"]]
                    if trace_id not in seen["traces"]:
                        seen["traces"].append(trace_id)
                        seen["errors"].append(attempt["error"])
                        seen["instead"].append(answered)
        for call in json.loads(tool_calls or "[]"):
            seen = tools[call.get("name") or "?"]
            seen["calls"] += 1
            if not call.get("ok", True):
                seen["traces"].append(trace_id)
                seen["errors"].append(call.get("error") or "error")
        intent = classification.get("intent")
        if intent:
            seen = kinds[intent]
            seen["traces"].append(trace_id)
            moves = json.loads(escalations or "[]")
            if moves:
                seen["escalated"].append(trace_id)
                seen["to"].append(moves[-1].get("to"))
    return [
        *_provider_patterns(failures),
        *_tool_patterns(tools),
        *_escalation_patterns(kinds),
        *_document_patterns(documents),
    ]


def _most(values: list) -> str:
    counted: dict[Any, int] = defaultdict(int)
    for v in values:
        if v:
            counted[v] += 1
    return max(counted, key=counted.get) if counted else "none"


def _provider_patterns(failures) -> list[Pattern]:
    out = []
    for model, seen in failures.items():
        n = len(seen["traces"])
        if n < MIN_FAILURES:
            continue
        error, instead = _most(seen["errors"]), _most(seen["instead"])
        fallback = f"; {instead} answered instead" if instead != "none" else ""
        out.append(Pattern(
            f"provider:{model}", "services",
            f"The model {model} fails often ({error}, {n} requests in {WINDOW_DAYS} days){fallback}",
            f"expect {model} to fail ({error})" + (f"; {instead} answers" if fallback else ""),
            ["model", "provider", model.split("/")[0]], traces=seen["traces"], count=n,
        ))  # fmt: skip
    return out


def _tool_patterns(tools) -> list[Pattern]:
    out = []
    for name, seen in tools.items():
        n = len(seen["traces"])
        if n < MIN_FAILURES:
            continue
        error = _most(seen["errors"])[:120]
        out.append(Pattern(
            f"tool:{name}", "tools",
            f"The {name} tool fails often: {n} of {seen['calls']} calls in {WINDOW_DAYS} days "
            f"({error})",
            f"{name} may fail ({error})", ["tool", name], traces=seen["traces"], count=n,
        ))  # fmt: skip
    return out


def _escalation_patterns(kinds) -> list[Pattern]:
    out = []
    for intent, seen in kinds.items():
        n, total = len(seen["escalated"]), len(seen["traces"])
        if n < MIN_ESCALATIONS or n * 2 < total:
            continue
        tier = _most(seen["to"])
        out.append(Pattern(
            f"escalation:{intent}:{tier}", "tools",
            f"Requests of kind {intent} usually need the {tier} tier: {n} of {total} escalated "
            f"in {WINDOW_DAYS} days",
            f"{intent} requests escalate to {tier}", ["escalation", intent, tier.lower()],
            traces=seen["escalated"], count=n,
        ))  # fmt: skip
    return out


def _document_patterns(documents) -> list[Pattern]:
    out = []
    for family, traces in documents.items():
        if len(traces) < MIN_DOCUMENTS:
            continue
        out.append(Pattern(
            f"documents:{family}", "documents",
            f"PDFs named like {family} arrive as scanned images without a text layer "
            f"({len(traces)} received, none readable)",
            "no text layer: ask for the original file or a copy with OCR",
            ["pdf", "scan", "ocr"], traces=traces, count=len(traces),
        ))  # fmt: skip
    return out


def document_family(name: str) -> str:
    """A file name with its numbers and dates starred: `Releve_BNP_2024-03.pdf` → `releve_bnp_*.pdf`."""
    path = PurePath(name.lower())
    stem = re.sub(r"[\d]+(?:[-_.\s]?\d+)*", "*", path.stem)
    stem = re.sub(r"\*+", "*", re.sub(r"[^\w*-]+", "_", stem)).strip("_") or "*"
    return f"{stem}{path.suffix or ''}"


def record_document_without_text(
    services: Services, *, surface: str, chat_id: str, name: str
) -> None:
    """Remember, as a trace, that a file yielded no text (never its name, only its family)."""
    try:
        services.traces.record(
            surface=surface, chat_id=chat_id, error=NO_TEXT,
            classification={"intent": "document",
                            "document": {"family": document_family(name)}},
        )  # fmt: skip
    except EloraError as exc:  # the operator's error message matters more than this record
        log.warning("document observation not stored: %s", exc)


# -- the job -------------------------------------------------------------------------------


def _proposed_keys(services: Services) -> set[str]:
    return services.proposals.candidate_values(ORIGIN, "environment_key")


async def observe(services: Services) -> dict[str, Any]:
    """The `environment` job: file a proposal for every recurring pattern not proposed yet."""
    done = _proposed_keys(services)
    written = written_patterns(services)
    experienced = experienced_patterns(services)
    proposed = blocked = 0
    buckets: dict[str, int] = defaultdict(int)
    for pattern in [*written, *experienced]:
        if pattern.key in done:
            continue
        extra = {"environment_key": pattern.key}
        if pattern.traces:
            extra["attributes"] = {"evidence_traces": pattern.traces[-MAX_EVIDENCE:]}
        try:
            await services.learner.submit(pattern.candidate(), origin=ORIGIN, extra=extra)
        except ConsentRefused:
            blocked += 1
            continue
        proposed += 1
        buckets[pattern.bucket] += 1
    return {
        "patterns": len(written) + len(experienced),
        "from_messages": len(written),
        "from_experience": len(experienced),
        "proposed": proposed,
        "by_bucket": dict(buckets),
        "blocked_by_consent": blocked,
    }


def figures(services: Services) -> dict[str, Any]:
    """For the audit: active predictions per sub-bucket, and the environment proposal queue."""
    attributes = [e.attributes or {} for e in services.memory.in_tier("environment")]
    buckets: dict[str, int] = defaultdict(int)
    for a in attributes:
        buckets[a["bucket"] if a.get("bucket") is not None else "general"] += 1
    queue = services.proposals.status_counts(origin=ORIGIN)
    return {
        "predictions": len(attributes),
        "with_prediction": sum(a.get("prediction") is not None for a in attributes),
        "by_bucket": dict(buckets),
        "proposals": {
            "open": queue.get("pending", 0) + queue.get("recommended", 0),
            "approved": queue.get("approved", 0),
            "rejected": queue.get("rejected", 0),
        },
    }
