"""A wheel carries what Elora reads at run time (prompt templates, example skills, the identity
files, the engine's C source) under `core/`, and nothing else from `data/`, the default home.

The wheel is built from a copy of the checkout in which a used runtime home was planted. The
build runs without isolation or index (the dev extra pins setuptools), so it needs no network.
`.ci/run` goes further: it installs a wheel outside the checkout and runs `elora` from it.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
# What a home in use leaves in data/; none of it may end up in a wheel.
PRIVATE = (
    "elora.db",
    "chroma/chroma.sqlite3",
    "mirror/entries/personalized/pref.md",
    "spool/captures.jsonl",
    "skills/my-own-skill/SKILL.md",
)


def _git_files(*options: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", *options],
        cwd=REPOSITORY,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (REPOSITORY / name).is_file()]


# The checkout's files, tracked or new but not ignored (so not the runtime home's database...).
CHECKOUT = _git_files("--cached", "--others", "--exclude-standard")
TEMPLATES = fnmatch.filter(CHECKOUT, "prompts/*.j2")
# Only the committed examples ship: a skill forged into the checkout's own home does not.
SKILLS = fnmatch.filter(_git_files("--cached"), "data/skills/*/SKILL.md")


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> set[str]:
    """The names inside a wheel built from a copy of the checkout (engine not compiled)."""
    source = tmp_path_factory.mktemp("checkout")
    for name in CHECKOUT:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPOSITORY / name, source / name)
    for name in PRIVATE:
        (source / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (source / "data" / name).write_text("private to this home\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q"]
    command += ["--no-build-isolation", "--no-index", "-w", str(out)]
    env = {**os.environ, "ELORA_NO_NATIVE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("elora-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_every_prompt_template_ships(wheel_files):
    assert len(TEMPLATES) >= 10
    for name in TEMPLATES:
        assert name.replace("prompts/", "core/shipped/prompts/") in wheel_files


def test_the_example_skills_and_both_identities_ship_and_nothing_else_of_data(wheel_files):
    shipped = {f for f in wheel_files if f.startswith("core/shipped/examples/")}

    assert len(SKILLS) == 4
    assert shipped == {
        "core/shipped/examples/__init__.py",
        "core/shipped/examples/identity.md",  # the demo home's example
        *(name.replace("data/", "core/shipped/examples/") for name in SKILLS),
    }
    assert "core/shipped/identity.md" in wheel_files  # the starter of a new home


def test_the_engine_source_ships_beside_its_loader(wheel_files):
    assert {"core/native/__init__.py", "core/native/e5.c", "core/native/e5.h"} <= wheel_files


def test_nothing_of_a_used_home_ships_and_nothing_lands_at_the_top(wheel_files):
    for name in PRIVATE:
        assert not any(f.endswith(name) for f in wheel_files), name
    top = {f.split("/")[0] for f in wheel_files if ".dist-info/" not in f}
    assert top == {"bot", "cockpit", "core"}
