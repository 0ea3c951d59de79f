"""Shipped files are package data: read through importlib.resources, or a clear error."""

import pytest

from core import shipped
from core.errors import ConfigError

EXAMPLE_SKILLS = ("devils-advocate", "financial-analyst", "privacy-lawyer", "product-strategist")


def test_the_example_skills_and_templates_resolve_as_package_data():
    skills = shipped.shipped_skills()

    assert set(EXAMPLE_SKILLS) <= set(skills)
    for name, profile in skills.items():
        assert profile.read_text(encoding="utf-8").startswith(f"---\nskill_id: {name}\n")
    assert shipped.prompt_files().joinpath("system.j2").is_file()


def test_an_install_without_the_shipped_packages_says_how_to_fix_it(monkeypatch):
    # What an editable install made before these packages existed looks like.
    monkeypatch.setattr(shipped, "PROMPTS", "core.shipped.not_installed")

    with pytest.raises(ConfigError, match=r"reinstall Elora \(in a checkout: pip install -e \.\)"):
        shipped.prompt_files()


def test_skills_are_copied_once_the_install_is_repaired(services, home, monkeypatch):
    from core.council.skills import list_skills

    monkeypatch.setattr(shipped, "EXAMPLES", "core.shipped.not_installed")
    with pytest.raises(ConfigError):
        list_skills(services)
    assert not (home / "skills").exists()  # not left empty, which would mean "copied already"

    monkeypatch.undo()

    assert set(EXAMPLE_SKILLS) <= {s.skill_id for s in list_skills(services)}
