"""Council tools offered to the routing loop: consult_council, consult_expert, list_skills,
forge_skill, list_sub_chats, delegate_to_subagent."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.routing.tools import ToolContext

_ASKED_FOR_COUNCIL = re.compile(
    r"\b(council|round ?table|panel of experts|ask (?:the |some |an? )?experts?|consult|delegate|"
    r"conseil|table ronde|avis d'experts?|consulte|delegue)\b",
    re.I,
)


def operator_asked_for_council(text: str) -> bool:
    """Whether the operator's message asks for a council or experts."""
    return bool(_ASKED_FOR_COUNCIL.search(text or ""))


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CouncilArgs(_Args):
    """Convene a round table of 2-5 expert skills (Delphi rounds, then a synthesis)."""

    question: str = Field(min_length=3)
    participants: list[str] = Field(min_length=1, description="skill ids, 2 to 5 distinct")
    rounds: int = Field(3, ge=1, le=10)
    history_depth: int | None = Field(None, ge=0, le=200)
    distillation_focus: str | None = None


class ExpertArgs(_Args):
    """Consult one expert skill 1:1; pass sub_sid to continue an earlier thread."""

    role: str = Field(min_length=2, description="skill id")
    prompt: str = Field(min_length=3)
    sub_sid: str | None = None


class ListSkillsArgs(_Args):
    """List the expert skills available for consult_expert and consult_council."""


class ForgeSkillArgs(_Args):
    """Create or update an expert skill (tone, method, output constraints)."""

    skill_id: str
    name: str
    description: str
    instructions: str


class ListSubChatsArgs(_Args):
    """List this chat's expert and sub-agent threads (sub_sid, role, last summary)."""


class DelegateArgs(_Args):
    """Delegate a task to a stateful sub-agent with memory tools; it may answer with QUESTION:."""

    task: str = Field(min_length=3)
    system_prompt: str | None = None
    sub_sid: str | None = None


async def _council(ctx: ToolContext, args: CouncilArgs) -> dict[str, Any]:
    from core.council.council import consult_council

    transcript = await consult_council(
        ctx.services, args.question, args.participants, args.rounds,
        history_depth=args.history_depth, distillation_focus=args.distillation_focus,
        surface=ctx.surface, chat_id=ctx.chat_id,
    )  # fmt: skip
    return {
        "synthesis": transcript["synthesis"]["text"],
        "failures": [f for r in transcript["rounds"] for f in r["failures"]],
        "rounds": len(transcript["rounds"]),
        "notes": transcript["notes"],
    }


async def _expert(ctx: ToolContext, args: ExpertArgs) -> dict[str, Any]:
    from core.council.expert import consult_expert

    return await consult_expert(
        ctx.services, args.role, args.prompt, args.sub_sid, chat_id=ctx.chat_id, surface=ctx.surface
    )


async def _list_skills(ctx: ToolContext, args: ListSkillsArgs) -> dict[str, Any]:
    from core.council.skills import list_skills

    return {"skills": [s.summary() for s in list_skills(ctx.services)]}


async def _forge(ctx: ToolContext, args: ForgeSkillArgs) -> dict[str, Any]:
    from core.council.skills import forge_skill

    skill = forge_skill(ctx.services, args.skill_id, args.name, args.description, args.instructions)
    return {"forged": skill.skill_id}


async def _sub_chats(ctx: ToolContext, args: ListSubChatsArgs) -> dict[str, Any]:
    from core.council.threads import list_sub_chats

    return {"threads": list_sub_chats(ctx.services, ctx.chat_id)}


async def _delegate(ctx: ToolContext, args: DelegateArgs) -> dict[str, Any]:
    from core.council.delegate import delegate_to_subagent

    return await delegate_to_subagent(
        ctx.services, args.task, args.system_prompt, args.sub_sid,
        chat_id=ctx.chat_id, surface=ctx.surface, user_id=ctx.user_id,
    )  # fmt: skip


def council_tools() -> dict[str, tuple[type[BaseModel], Any]]:
    """Tool name → (argument model, handler), for ToolBox(extra=...)."""
    return {
        "consult_council": (CouncilArgs, _council),
        "consult_expert": (ExpertArgs, _expert),
        "list_skills": (ListSkillsArgs, _list_skills),
        "forge_skill": (ForgeSkillArgs, _forge),
        "list_sub_chats": (ListSubChatsArgs, _sub_chats),
        "delegate_to_subagent": (DelegateArgs, _delegate),
    }


def council_allowed(tier: str, ctx: ToolContext) -> bool:
    """The council is costly: only from FLASH or PRO, or when the operator asks for it."""
    return tier in ("FLASH", "PRO") or operator_asked_for_council(ctx.operator_text)
