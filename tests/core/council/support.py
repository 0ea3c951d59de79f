"""Helpers for the council tests: a panel of skills and standing answers for a council.

Participants of a round speak concurrently, so their replies are chosen by what each request
contains (its "You are Participant N" system message and its "Round K" prompt), never by the
order requests arrive in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.council.skills import forge_skill
from tests.llm_server import Reply

QUESTION = "Should we buy a flat in Lyon this year or keep renting?"
SYNTHESIS = (
    "## Consensus\nRenting one more year is safe.\n\n"
    "## Divergences\nParticipant 1 wants to buy now; Participant 2 wants to wait.\n\n"
    "## Recommendations\n1. Save the deposit.\n2. Revisit in six months."
)
DISTILLED = "- the operator earns 3,200 EUR a month and rents for 900 EUR"

# Three experts; each instructions text carries a word that must never reach another seat.
PANEL = {
    "alpha-economist": ("Economist", "Costs, incentives and trade-offs.", "AMBERFOX"),
    "beta-urbanist": ("Urbanist", "Cities, housing and transport.", "ZEPHYRLOOM"),
    "gamma-ethicist": ("Ethicist", "Fairness and the people affected.", "QUILLMOTH"),
}


def instructions_of(skill_id: str) -> str:
    """The forged instructions of a panel skill (with its private marker word)."""
    marker = PANEL[skill_id][2]
    return f"Reason with the {marker} method; state assumptions; at most 150 words."


def forge_panel(services) -> list[str]:
    """Forge the three panel skills into a home (the shipped ones are there too)."""
    for skill_id, (name, description, _) in PANEL.items():
        forge_skill(services, skill_id, name, description, instructions_of(skill_id))
    return list(PANEL)


@pytest.fixture
def panel(services):
    """The three panel skills in the test home."""
    return forge_panel(services)


def texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    """The contents of a request's messages (of one role when given)."""
    return [m.get("content") or "" for m in body["messages"] if role is None or m["role"] == role]


def whole(body: dict[str, Any]) -> str:
    """Everything a request shows the model, as one text."""
    return "\n".join(texts(body))


def seat_of(body: dict[str, Any]) -> int | None:
    """The participant number a council request speaks for, or None."""
    system = texts(body, "system")
    match = re.search(r"You are Participant (\d+)", system[0]) if system else None
    return int(match.group(1)) if match else None


def round_of(body: dict[str, Any]) -> int:
    """The round number of a participant request (from its latest prompt)."""
    return int(re.search(r"Round (\d+) of", texts(body, "user")[-1]).group(1))


def contribution(seat: int, number: int) -> str:
    """The scripted contribution of a participant in a round."""
    return f"POSITION-P{seat}-R{number}: my view as participant {seat}."


def is_synthesis(body: dict[str, Any]) -> bool:
    """Whether a request asks for the council's synthesis."""
    return "neutral rapporteur" in whole(body)


def is_distillation(body: dict[str, Any]) -> bool:
    """Whether a request asks to distil the chat."""
    return "Summarise the conversation turns" in whole(body)


@dataclass
class Council:
    """Standing answers for a council: contributions by seat and round, a distillation, a
    synthesis; `special[(seat, round)]` replaces one contribution (an error, a delay...)."""

    synthesis: Reply | str = SYNTHESIS
    distillation: Reply | str = DISTILLED
    special: dict[tuple[int, int], Reply] = field(default_factory=dict)
    delay: float = 0.0
    tokens: int = 50

    def __call__(self, body: dict[str, Any]) -> Reply | str | None:
        if is_synthesis(body):
            return self.synthesis
        if is_distillation(body):
            return self.distillation
        seat = seat_of(body)
        if seat is None:
            return None
        number = round_of(body)
        return self.special.get((seat, number)) or Reply(
            text=contribution(seat, number), delay=self.delay, prompt_tokens=self.tokens
        )


def calls(*tool_calls: dict[str, Any]) -> Reply:
    """A reply made of tool calls only."""
    return Reply(tool_calls=list(tool_calls))


def seat_requests(llm, model: str = "fake-flash") -> dict[int, list[dict[str, Any]]]:
    """Participant requests by seat number, in the order each seat sent them."""
    out: dict[int, list[dict[str, Any]]] = {}
    for body in llm.requests_for(model):
        seat = seat_of(body)
        if seat is not None:
            out.setdefault(seat, []).append(body)
    return out


def synthesis_requests(llm, model: str = "fake-flash") -> list[dict[str, Any]]:
    """The synthesis requests a model received."""
    return [b for b in llm.requests_for(model) if is_synthesis(b)]


def distillation_requests(llm, model: str = "fake-lite") -> list[dict[str, Any]]:
    """The distillation requests a model received."""
    return [b for b in llm.requests_for(model) if is_distillation(b)]
