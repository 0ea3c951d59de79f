"""consult_council: a Delphi round table of 2-5 expert skills.

Participants are anonymised ("Participant 1"...), see the roster of roles but never each other's
instructions; round 1 gets the question and a distillation of the active chat; later rounds get
the other participants' previous contributions (not their own); every call of a round runs
concurrently; a failing participant is noted and the others go on; a synthesiser reports
consensus, divergences and recommendations. Tokens and cost are traced and count against the
daily spending cap.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.council.distill import distill_chat
from core.council.skills import Skill, get_skill, list_skills
from core.errors import EloraError, InvalidInput, NotFound
from core.prompts import render
from core.routing.client import traced_separately
from core.routing.loop import usage_totals

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

MIN_PARTICIPANTS, MAX_PARTICIPANTS = 2, 5
DEFAULT_ROUNDS, MAX_ROUNDS = 3, 5
SECTIONS = ("consensus", "divergences", "recommendations")


class CouncilError(InvalidInput):
    """The council cannot be convened as asked; the message says what to do instead."""


@dataclass
class Seat:
    """A participant: an anonymous name, its skill, and its own running conversation."""

    name: str
    skill: Skill
    history: list[dict[str, Any]] = field(default_factory=list)


def _roster_error(services: Services, reason: str) -> CouncilError:
    available = [f"{s.skill_id} ({s.name})" for s in list_skills(services)]
    listing = ", ".join(available) or "none yet"
    return CouncilError(
        f"{reason}. A council needs {MIN_PARTICIPANTS} to {MAX_PARTICIPANTS} distinct skills. "
        f"Available skills: {listing}. Create a missing expert with forge_skill "
        "(`elora skills forge ID --name ... --description ... --instructions ...`)."
    )


def seat_participants(services: Services, participants: list[str] | str) -> list[Seat]:
    """Validate the participants and give each an anonymous seat."""
    if isinstance(participants, str):
        participants = [p for p in re.split(r"[,\s]+", participants) if p]
    ids = list(dict.fromkeys(p.strip() for p in participants if p.strip()))
    if len(ids) < MIN_PARTICIPANTS:
        raise _roster_error(services, f"only {len(ids)} distinct participant(s) given")
    skills: dict[str, Skill] = {}
    for skill_id in ids:
        try:
            skill = get_skill(services, skill_id)
        except NotFound:
            raise _roster_error(services, f"unknown skill {skill_id!r}") from None
        skills.setdefault(skill.skill_id, skill)  # an id and its name are one participant
    if len(skills) < MIN_PARTICIPANTS:
        raise _roster_error(services, f"only {len(skills)} distinct participant(s) given")
    if len(skills) > MAX_PARTICIPANTS:
        raise _roster_error(services, f"{len(skills)} participants is more than {MAX_PARTICIPANTS}")
    return [Seat(f"Participant {n}", s) for n, s in enumerate(skills.values(), start=1)]


def parse_synthesis(text: str) -> dict[str, str]:
    """Split the synthesiser's Markdown into consensus / divergences / recommendations."""
    parts: dict[str, str] = {}
    # A synthesis written in French keeps "Consensus"/"Divergences" but says "Recommandations".
    pattern = re.compile(
        r"^#+\s*(consensus|divergences?|recomm[ae]ndations?)\s*:?\s*$", re.I | re.M
    )
    matches = list(pattern.finditer(text))
    for i, m in enumerate(matches):
        word = m.group(1).lower()
        key = next(k for k in SECTIONS if k[:5] == word[:5])
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        parts[key] = text[m.end() : end].strip()
    return {k: parts.get(k, "") for k in SECTIONS}


@traced_separately
async def consult_council(
    services: Services,
    question: str,
    participants: list[str] | str,
    rounds: int = DEFAULT_ROUNDS,
    *,
    synthesis_model: str | None = None,
    participant_model: str | None = None,
    history_depth: int | None = None,
    distillation_focus: str | None = None,
    surface: str = "cli",
    chat_id: str | None = None,
    on_round: Callable[[int, dict[str, Any]], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Run the round table and return the full transcript with its synthesis."""
    if not question.strip():
        raise CouncilError("the council needs a question")
    seats = seat_participants(services, participants)
    notes = []
    if rounds > MAX_ROUNDS:
        notes.append(f"rounds capped at {MAX_ROUNDS} (asked {rounds})")
    rounds = max(1, min(int(rounds), MAX_ROUNDS))
    tier = participant_model or services.settings.model_council
    synthesis_model = synthesis_model or services.settings.model_synthesis
    services.spend.check(tier)
    usage: list[dict[str, Any]] = []
    transcript: dict[str, Any] = {
        "question": question,
        "participants": [
            {"name": s.name, "skill_id": s.skill.skill_id, "role": s.skill.name} for s in seats
        ],
        "context": None,
        "rounds": [],
        "notes": notes,
    }
    classification = {"intent": "council", "rounds": rounds,
                      "participants": [s.skill.skill_id for s in seats]}  # fmt: skip
    try:
        transcript["context"] = await distill_chat(
            services, surface, chat_id, history_depth, distillation_focus, usage
        )
        await _deliberate(services, seats, tier, question, rounds, transcript, usage, on_round)
        services.spend.check(synthesis_model, running=_cost(usage))
        prompt = render("council_synthesis", question=question, context=transcript["context"],
                        roster=_roster(seats), rounds=transcript["rounds"])  # fmt: skip
        synthesis = await services.llm.complete(
            synthesis_model, [{"role": "user", "content": prompt}]
        )
        usage.append(synthesis.record())
    except EloraError as exc:
        # The calls already made were paid for: trace them so they count against the cap.
        if usage:
            _trace(services, chat_id, usage, classification, f"{type(exc).__name__}: {exc}")
        raise
    transcript["synthesis"] = {
        "text": synthesis.text or "",
        "model": synthesis.model,
        **parse_synthesis(synthesis.text or ""),
    }
    trace = _trace(services, chat_id, usage, classification)
    transcript.update(tokens_in=trace.tokens_in, tokens_out=trace.tokens_out, cost=trace.cost,
                      calls=len(usage), trace_id=trace.id)  # fmt: skip
    return transcript


def _roster(seats: list[Seat]) -> list[dict[str, str]]:
    """What every participant may know of the panel: names, roles, descriptions."""
    return [
        {"name": s.name, "role": s.skill.name, "description": s.skill.description} for s in seats
    ]


async def _deliberate(services, seats, tier, question, rounds, transcript, usage, on_round):
    """Run the rounds, appending each round's record to the transcript and its calls to usage."""
    roster, context = _roster(seats), transcript["context"]
    previous: dict[str, str] = {}
    for number in range(1, rounds + 1):
        services.spend.check(tier, running=_cost(usage))
        results = await asyncio.gather(
            *(_speak(services, seat, tier, number, question, context, roster, previous, rounds)
              for seat in seats),
            return_exceptions=True,
        )  # fmt: skip
        record: dict[str, Any] = {"round": number, "contributions": [], "failures": []}
        current: dict[str, str] = {}
        for seat, result in zip(seats, results, strict=True):
            if isinstance(result, BaseException) and not isinstance(result, EloraError):
                raise result  # a bug, not a participant failing
            if isinstance(result, EloraError):
                reason = str(result).strip() or type(result).__name__  # keeps "429" vs "Timeout"
                record["failures"].append({"participant": seat.name, "skill_id": seat.skill.skill_id,
                                           "error": f"{type(result).__name__}: {reason}"[:300]})  # fmt: skip
                continue
            usage.append(result.record())
            current[seat.name] = result.text or ""
            record["contributions"].append(
                {"participant": seat.name, "skill_id": seat.skill.skill_id, "role": seat.skill.name,
                 "text": result.text or "", "model": result.model, "tokens_in": result.tokens_in,
                 "tokens_out": result.tokens_out, "cost": result.cost}
            )  # fmt: skip
        transcript["rounds"].append(record)
        previous = current
        if on_round is not None:
            await on_round(number, record)


def _trace(services, chat_id, usage, classification, error: str | None = None):
    """One "council" trace for every call of the council (its cost counts against the cap)."""
    return services.traces.record(
        surface="council", chat_id=chat_id, models=usage, classification=classification,
        error=error[:300] if error else None, **usage_totals(usage),
    )  # fmt: skip


def _cost(usage: list[dict[str, Any]]) -> float:
    return round(sum(u["cost"] or 0.0 for u in usage), 8)


async def _speak(services, seat: Seat, tier, number, question, context, roster, previous, rounds):
    """One participant's turn; its own history keeps continuity between rounds."""
    if not seat.history:
        system = render("council_participant", name=seat.name, skill=seat.skill, roster=roster,
                        rounds=rounds)  # fmt: skip
        seat.history.append({"role": "system", "content": system})
    others = [{"name": name, "text": text} for name, text in previous.items() if name != seat.name]
    # A seat that has not spoken yet (its earlier rounds failed) has never seen the question.
    first_turn = not any(m["role"] == "assistant" for m in seat.history)
    content = render("council_round", number=number, question=question, context=context,
                     others=others, rounds=rounds, first_turn=first_turn)  # fmt: skip
    seat.history.append({"role": "user", "content": content})
    try:
        completion = await services.llm.complete(tier, list(seat.history))
    except EloraError:
        seat.history.pop()
        raise
    seat.history.append({"role": "assistant", "content": completion.text or ""})
    return completion
