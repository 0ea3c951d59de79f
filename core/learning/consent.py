"""Consent: "don't remember this" silences a turn; "never store X" becomes a standing rule.

Consent is final: a message under a consent instruction is material for no job. Each capture
records at capture time why it is withheld (`captures.consent`: the instruction it carries, or
`forgotten` once a forgotten entry came from it); standing never-store rules reach every message,
old or new. Every reader of captures (extraction, `elora learn`, reflexion) and of entries drawn
from them (promotion, the Markdown mirror) goes through `Consent` below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import InvalidInput
from core.recall.lexical import fold, terms

if TYPE_CHECKING:
    from core.services import Services

_DONT_REMEMBER = re.compile(
    r"(ne (le |la |les )?retiens pas|ne retiens rien|n'enregistre pas|ne (le |la )?memorise pas|"
    r"ne garde pas (ca|cela|ceci)|oublie (ca|cela|ce que je viens)|c'est confidentiel|"
    r"don'?t (remember|save|store|keep|record|memori[sz]e) (this|that|it)|do not (remember|save|store|keep|record) "
    r"(this|that|it)|off the record|forget (i said|what i just said) (this|that)?|between us)"
)
# An instruction, so at the start of a clause: "I never remember names" is not one.
_NEVER_STORE = re.compile(
    r"(?:^|[.!?;:,]\s*)(?:please\s+|s'il te plait,?\s+|stp,?\s+)?"
    r"(?:never (?:store|remember|save|keep|record)|don'?t ever (?:store|remember|save|keep)|"
    r"ne (?:retiens|stocke|garde|memorise|enregistre) jamais|n'enregistre jamais)\s+"
    r"(?:anything (?:about|on|regarding)\s+|rien (?:sur|de|a propos de|concernant)\s+|"
    r"(?:mes|my|les|the|des)\s+)?([^.!?;]{2,80}?)\s*(?:[.!?;]|$)"
)


# ", d'accord ?" / ", please" after the subject is politeness, not part of it.
_TAG = re.compile(
    r",\s*(?:ok|okay|d'accord|please|stp|s'il te plait|merci|thanks|got it|understood|compris|"
    r"tu veux bien|ca marche|right)\b.*$"
)


class ConsentRefused(InvalidInput):
    """A candidate touches a subject the operator asked never to store."""


@dataclass(frozen=True)
class ConsentVerdict:
    """What the operator's words allow for this turn."""

    suppress_turn: bool = False
    never_store: str | None = None


def read_consent(text: str) -> ConsentVerdict:
    """Detect "don't remember this" and "never store X" (French and English)."""
    folded = fold(text).replace("’", "'")
    never = _NEVER_STORE.search(folded)
    if never:
        subject = _TAG.sub("", never.group(1)).strip(" .,'\"")
        return ConsentVerdict(suppress_turn=True, never_store=subject)
    return ConsentVerdict(suppress_turn=bool(_DONT_REMEMBER.search(folded)))


# Values of captures.consent. The first two are the operator's instructions; FORGOTTEN marks
# the messages a forgotten entry was drawn from, so nothing learns the same thing from them again.
DONT_REMEMBER, NEVER_STORE, FORGOTTEN = "dont_remember", "never_store", "forgotten"
INSTRUCTIONS = (DONT_REMEMBER, NEVER_STORE)


def consent_of(text: str) -> str | None:
    """The consent flag a message carries from its own words (None: it may be learned from)."""
    verdict = read_consent(text or "")
    if verdict.never_store:
        return NEVER_STORE
    return DONT_REMEMBER if verdict.suppress_turn else None


_POLITE = {"stp", "svp", "merci", "please", "thanks", "thank", "ok", "okay", "plait", "hein"}


def is_bare_instruction(text: str) -> bool:
    """Whether a message is only "don't remember this" (so "this" is the message before it)."""
    folded = fold(text).replace("’", "'")
    if not _DONT_REMEMBER.search(folded) or _NEVER_STORE.search(folded):
        return False
    rest = _DONT_REMEMBER.sub(" ", folded)
    return len([t for t in terms(rest) if t not in _POLITE]) <= 1


def withhold_previous(services: Services, capture_id: str, minutes: int = 30) -> int:
    """A bare "don't remember this" withholds the same speaker's previous message in the chat
    (sent in the last `minutes`) and withdraws the open proposals drawn from it alone; return
    how many proposals were withdrawn."""
    captures = services.archive.captures
    sent = captures.sent_at(capture_id)
    previous = captures.previous(capture_id, same_speaker=True)
    if sent is None or previous is None or _minutes_between(previous.sent_at, sent) > minutes:
        return 0
    captures.withhold([previous.id], DONT_REMEMBER)
    return services.proposals.withdraw_drawn_from(previous.id)


def _minutes_between(earlier, later) -> float:
    from datetime import datetime

    def parse(value):
        return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))

    return (parse(later) - parse(earlier)).total_seconds() / 60


def add_never_store_rule(services: Services, subject: str, capture_id: str | None = None):
    """Record the standing rule as a procedural constraint (an explicit command is an approval)."""
    from core.memory.api import remember

    slug = "-".join(terms(subject)[:4]) or "subject"
    sources = [{"capture_id": capture_id, "origin": "operator"}] if capture_id else None
    return remember(
        services,
        f"Never store anything about: {subject}",
        kind="constraint",
        tier="procedural",
        importance=4,
        topics=["consent", *terms(subject)[:3]],
        memory_id=f"rule.never-store.{slug}"[:110],
        sources=sources,
        attributes={"consent": "never_store", "pattern": subject, "triggers": terms(subject)},
    )


_LIST = re.compile(r",|;|\b(?:and|or|et|ou|nor|ni)\b")


def never_store_patterns(services: Services) -> list[list[str]]:
    """The folded terms of every active never-store rule; "my health or my bank" is two."""
    # Only the rules' attributes, prefiltered in SQL: loading every active procedural entry
    # as an object cost tens of milliseconds per exchange on a large memory (and stopped at 500).
    attributes = services.memory.rule_attributes("never_store")
    subjects = [a.get("pattern", "") for a in attributes if a.get("consent") == "never_store"]
    return [t for s in subjects for part in _LIST.split(fold(s)) if (t := terms(part))]


def blocked_by_rule(text: str, patterns: list[list[str]]) -> bool:
    """Whether a candidate touches a never-store subject (all of a rule's terms appear)."""
    words = set(terms(text))
    folded = fold(text)
    return any(pattern and all(p in words or p in folded for p in pattern) for pattern in patterns)


def is_never_store_rule(entry) -> bool:
    """Whether an entry is a standing never-store rule itself (the operator's own command)."""
    return (entry.attributes or {}).get("consent") == NEVER_STORE


class Consent:
    """What the operator's consent lets a job read, built once per run (rules are read once)."""

    def __init__(
        self,
        consent_flags: Callable[[Iterable[str]], list[tuple[str, str, str | None]]],
        patterns: list[list[str]],
    ):
        self.consent_flags = consent_flags  # (id, text, flag) of captures, from the archive
        self.patterns = patterns  # the never-store rules' terms (never_store_patterns)

    @classmethod
    def of(cls, services: Services) -> Consent:
        """This home's consent: the archive's flags and the standing never-store rules."""
        return cls(services.archive.captures.consent_flags, never_store_patterns(services))

    def allows(self, text: str, flag: str | None = None, rules: bool = True) -> bool:
        """Whether a message (its text and its capture-time flag) may be learned from; `rules`
        False leaves the standing never-store rules aside (the operator's explicit save)."""
        if flag is not None or consent_of(text) is not None:
            return False
        return not (rules and blocked_by_rule(text, self.patterns))

    def withheld(
        self, capture_ids: Iterable[str], instructions_only: bool = False, rules: bool = True
    ) -> set[str]:
        """The captures among these that no job may draw on (missing ones are not withheld).

        `instructions_only` leaves out messages withheld only because a forgotten entry came
        from them: they still back the other entries drawn from them."""
        rows = self.consent_flags(capture_ids)
        return {
            capture_id
            for capture_id, text, flag in rows
            if not self.allows(
                text, None if instructions_only and flag == FORGOTTEN else flag, rules
            )
        }

    def withheld_entries(self, entries: Iterable[Any]) -> set[str]:
        """The uuids of entries resting on withheld material: the text touches a never-store
        subject, or every message it was drawn from is under a consent instruction (the
        operator's own never-store rules excepted)."""
        entries = [e for e in entries if not is_never_store_rule(e)]
        sources = {e.uuid: _capture_ids(e) for e in entries}
        withheld = self.withheld(
            [c for ids in sources.values() for c in ids], instructions_only=True
        )
        return {
            e.uuid
            for e in entries
            if blocked_by_rule(e.canonical_text, self.patterns)
            or (sources[e.uuid] and set(sources[e.uuid]) <= withheld)
        }


def _capture_ids(entry) -> list[str]:
    return [
        s["capture_id"] for s in entry.sources or [] if isinstance(s, dict) and s.get("capture_id")
    ]
