"""Skills: expert profiles stored as `<ELORA_HOME>/skills/<skill_id>/SKILL.md`.

Front matter holds skill_id, name and description; the body holds the expert's tone, method
and output constraints. The examples shipped in `data/skills/` (package data, see core/shipped)
are copied into a home the first time it is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import InvalidInput, NotFound
from core.shipped import shipped_skills

if TYPE_CHECKING:
    from core.services import Services

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
_FRONT = re.compile(r"^---\n(.*?)\n---\n?(.*)$", re.S)


@dataclass(frozen=True)
class Skill:
    """One expert profile."""

    skill_id: str
    name: str
    description: str
    instructions: str
    path: Path

    def summary(self) -> dict[str, str]:
        """What others may see of this skill: id, name, description (never the instructions)."""
        return {"skill_id": self.skill_id, "name": self.name, "description": self.description}


def skills_dir(services: Services) -> Path:
    """Where skills live; shipped examples are copied there the first time."""
    directory = services.settings.home / "skills"
    if not directory.exists():
        examples = shipped_skills()  # before mkdir: a failure here must not leave it empty
        directory.mkdir(parents=True, exist_ok=True)
        for name, source in examples.items():
            target = directory / name / "SKILL.md"
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(source.read_bytes())
    return directory


def parse_skill(path: Path) -> Skill:
    """Read and validate one SKILL.md."""
    import yaml

    text = path.read_text(encoding="utf-8")
    match = _FRONT.match(text)
    if not match:
        raise InvalidInput(f"{path}: missing front matter (--- skill_id, name, description ---)")
    try:
        front = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: invalid front matter: {exc}") from None
    skill = Skill(
        skill_id=str(front.get("skill_id", "")).strip(),
        name=str(front.get("name", "")).strip(),
        description=str(front.get("description", "")).strip(),
        instructions=match.group(2).strip(),
        path=path,
    )
    _validate(skill.skill_id, skill.name, skill.description, skill.instructions)
    return skill


def _validate(skill_id: str, name: str, description: str, instructions: str) -> None:
    if not _ID.match(skill_id):
        raise InvalidInput(f"skill_id {skill_id!r} must be a lowercase slug (letters, digits, -)")
    if not name:
        raise InvalidInput("a skill needs a name")
    if not description or len(description) > 300:
        raise InvalidInput("a skill needs a description of at most 300 characters")
    if len(instructions) < 20:
        raise InvalidInput(
            "a skill's instructions (tone, method, output) need at least 20 characters"
        )


def list_skills(services: Services) -> list[Skill]:
    """Every valid skill, by id (invalid files are skipped and reported by `elora skills`)."""
    skills = []
    for path in sorted(skills_dir(services).glob("*/SKILL.md")):
        try:
            skills.append(parse_skill(path))
        except InvalidInput:
            continue
    return skills


def get_skill(services: Services, skill_id: str) -> Skill:
    """One skill by id (or exact name), or NotFound listing the available ones."""
    for skill in list_skills(services):
        if skill_id in (skill.skill_id, skill.name):
            return skill
    available = ", ".join(s.skill_id for s in list_skills(services)) or "none"
    raise NotFound(f"no skill {skill_id!r}; available: {available}")


def forge_skill(
    services: Services, skill_id: str, name: str, description: str, instructions: str
) -> Skill:
    """Create or update a skill (validated before anything is written)."""
    skill_id, name, description = skill_id.strip(), name.strip(), description.strip()
    instructions = instructions.strip()
    _validate(skill_id, name, description, instructions)
    import yaml

    front = yaml.safe_dump(
        {"skill_id": skill_id, "name": name, "description": description},
        allow_unicode=True,
        sort_keys=False,
    ).strip()
    path = skills_dir(services) / skill_id / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n{instructions}\n", encoding="utf-8")
    return parse_skill(path)
