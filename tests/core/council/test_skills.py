"""Skills: SKILL.md expert profiles in the home, shipped examples, forge_skill validation."""

import json

import pytest

from core.cli.main import main
from core.council.skills import forge_skill, get_skill, list_skills, parse_skill
from core.errors import InvalidInput, NotFound
from core.shipped import shipped_skills

SHIPPED = shipped_skills()
SHIPPED_IDS = sorted(SHIPPED)
INSTRUCTIONS = "## Tone\nCalm.\n\n## Method\nWeigh both sides.\n\n## Output constraints\nShort."


def test_at_least_three_examples_ship_and_each_is_a_valid_profile():
    assert len(SHIPPED_IDS) >= 3
    for skill_id in SHIPPED_IDS:
        skill = parse_skill(SHIPPED[skill_id])
        assert skill.skill_id == skill_id
        assert skill.name and skill.description
        assert "Method" in skill.instructions and "Output" in skill.instructions


def test_a_fresh_home_gets_the_shipped_examples_on_first_use(services, home):
    assert not (home / "skills").exists()

    listed = [s.skill_id for s in list_skills(services)]

    assert listed == SHIPPED_IDS
    for skill_id in SHIPPED_IDS:
        copy = home / "skills" / skill_id / "SKILL.md"
        assert copy.read_text() == SHIPPED[skill_id].read_text()


def test_examples_the_operator_deleted_do_not_come_back(services, home):
    list_skills(services)
    removed = SHIPPED_IDS[0]
    (home / "skills" / removed / "SKILL.md").unlink()

    assert removed not in [s.skill_id for s in list_skills(services)]


def test_a_forged_skill_is_written_as_skill_md_and_listed(services, home):
    skill = forge_skill(
        services, "tax-advisor", "Tax advisor: FR", "French income tax, plainly.", INSTRUCTIONS
    )

    path = home / "skills" / "tax-advisor" / "SKILL.md"
    assert skill.path == path
    text = path.read_text()
    assert text.startswith("---\nskill_id: tax-advisor\n")
    assert "## Method\nWeigh both sides." in text
    again = get_skill(services, "tax-advisor")
    assert (again.name, again.description) == ("Tax advisor: FR", "French income tax, plainly.")
    assert again.instructions == INSTRUCTIONS
    assert "tax-advisor" in [s.skill_id for s in list_skills(services)]


def test_forging_an_existing_id_updates_it(services):
    forge_skill(services, "tax-advisor", "Tax advisor", "Income tax.", INSTRUCTIONS)

    forge_skill(services, "tax-advisor", "Tax advisor", "Income and wealth tax.", INSTRUCTIONS)

    assert get_skill(services, "tax-advisor").description == "Income and wealth tax."
    assert [s.skill_id for s in list_skills(services)].count("tax-advisor") == 1


@pytest.mark.parametrize(
    ("skill_id", "name", "description", "instructions", "complaint"),
    [
        ("Tax Advisor", "Tax", "Income tax.", INSTRUCTIONS, "lowercase slug"),
        ("../escape", "Tax", "Income tax.", INSTRUCTIONS, "lowercase slug"),
        ("tax-advisor", "  ", "Income tax.", INSTRUCTIONS, "needs a name"),
        ("tax-advisor", "Tax", "", INSTRUCTIONS, "description"),
        ("tax-advisor", "Tax", "x" * 301, INSTRUCTIONS, "description"),
        ("tax-advisor", "Tax", "Income tax.", "Be brief.", "at least 20 characters"),
    ],
)
def test_an_invalid_skill_is_refused_and_nothing_is_written(
    services, home, skill_id, name, description, instructions, complaint
):
    list_skills(services)  # the shipped examples are in place
    before = sorted(str(p.relative_to(home)) for p in (home / "skills").rglob("*"))

    with pytest.raises(InvalidInput, match=complaint):
        forge_skill(services, skill_id, name, description, instructions)

    assert sorted(str(p.relative_to(home)) for p in (home / "skills").rglob("*")) == before
    assert not (home / "escape").exists()


def test_a_refused_update_leaves_the_existing_skill_untouched(services):
    forge_skill(services, "tax-advisor", "Tax advisor", "Income tax.", INSTRUCTIONS)

    with pytest.raises(InvalidInput):
        forge_skill(services, "tax-advisor", "Tax advisor", "Income tax.", "too short")

    assert get_skill(services, "tax-advisor").instructions == INSTRUCTIONS


def test_a_broken_skill_file_is_skipped_not_fatal(services, home):
    list_skills(services)
    broken = home / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("no front matter here, just prose that goes on and on")

    listed = [s.skill_id for s in list_skills(services)]

    assert listed == SHIPPED_IDS


def test_an_unknown_skill_names_the_available_ones(services):
    with pytest.raises(NotFound) as caught:
        get_skill(services, "astrologer")

    for skill_id in SHIPPED_IDS:
        assert skill_id in str(caught.value)


# -- CLI ------------------------------------------------------------------------------------


def test_cli_lists_skills_as_json(home, capsys):
    assert main(["skills", "list", "--json"]) == 0

    listed = json.loads(capsys.readouterr().out)
    assert [s["skill_id"] for s in listed] == SHIPPED_IDS
    assert all(set(s) == {"skill_id", "name", "description"} for s in listed)


def test_cli_forges_then_shows_a_skill(home, capsys):
    code = main(["skills", "forge", "tax-advisor", "--name", "Tax advisor",
                 "--description", "Income tax, plainly.", "--instructions", INSTRUCTIONS])  # fmt: skip
    assert code == 0
    assert "forged tax-advisor" in capsys.readouterr().out

    assert main(["skills", "show", "tax-advisor"]) == 0
    shown = capsys.readouterr().out
    assert "name: Tax advisor" in shown and "## Method\nWeigh both sides." in shown


def test_cli_forge_reads_instructions_from_a_file(home, tmp_path, capsys):
    source = tmp_path / "instructions.md"
    source.write_text(INSTRUCTIONS)

    code = main(["skills", "forge", "tax-advisor", "--name", "Tax advisor",
                 "--description", "Income tax.", "--file", str(source)])  # fmt: skip

    assert code == 0
    assert (home / "skills" / "tax-advisor" / "SKILL.md").read_text().endswith(INSTRUCTIONS + "\n")


def test_cli_refuses_an_invalid_forge_with_one_clear_line(home, capsys):
    code = main(["skills", "forge", "tax-advisor", "--name", "Tax advisor",
                 "--description", "Income tax.", "--instructions", "short"])  # fmt: skip

    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("elora: ") and "at least 20 characters" in err
    assert not (home / "skills" / "tax-advisor").exists()


def test_cli_show_of_an_unknown_skill_fails_listing_the_available_ones(home, capsys):
    assert main(["skills", "show", "astrologer"]) == 1

    err = capsys.readouterr().err
    assert "no skill 'astrologer'" in err and SHIPPED_IDS[0] in err
