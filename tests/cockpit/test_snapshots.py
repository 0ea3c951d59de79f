"""SVG snapshots of the main screens on fixed data (pinned clock, known ids).

pytest-textual-snapshot 1.1.0 pins syrupy 4.8.0, which requires pytest < 9 (we pin 9.2.0), so
the comparison is done here: the SVG Textual exports is compared with the one committed under
tests/cockpit/snapshots/. After a deliberate change of the look, regenerate them with

    COCKPIT_UPDATE_SNAPSHOTS=1 pytest tests/cockpit/test_snapshots.py

and review the new SVGs (they open in any browser) before committing them.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tests.cockpit import test_memory, test_proposals, test_traces
from tests.cockpit.support import screen_lines, settle, svg_lines, wait_until

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("COCKPIT_UPDATE_SNAPSHOTS") == "1"


async def footer_shown(pilot) -> None:
    """Wait for the footer's keys: at 80 columns a resize recomposes the footer (compact), which
    can still be under way when the workers are done."""
    await wait_until(pilot, lambda: "Quit" in screen_lines(pilot.app)[-1], what="the footer")


def assert_snapshot(app, name: str, tmp_path: Path) -> None:
    """The screen matches snapshots/NAME.svg (or becomes it, with COCKPIT_UPDATE_SNAPSHOTS=1)."""
    svg = app.export_screenshot(title=name)
    expected_path = SNAPSHOTS / f"{name}.svg"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        expected_path.write_text(svg, encoding="utf-8")
        return
    assert expected_path.exists(), (
        f"no snapshot {expected_path.name}: run with COCKPIT_UPDATE_SNAPSHOTS=1 to create it"
    )
    expected = expected_path.read_text(encoding="utf-8")
    if svg == expected:
        return
    actual_path = tmp_path / f"{name}.svg"
    actual_path.write_text(svg, encoding="utf-8")
    diff = "\n".join(
        difflib.unified_diff(svg_lines(expected), svg_lines(svg), "expected", "actual", lineterm="")
    )
    raise AssertionError(
        f"screen differs from {expected_path.name} (new one in {actual_path}); "
        f"text diff (empty when only colours or styles changed):\n{diff}"
    )


async def test_snapshot_proposals_with_a_contradiction(services, cockpit, tmp_path):
    test_proposals._seed(services)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        assert_snapshot(app, "proposals_contradiction", tmp_path)


async def test_snapshot_proposals_at_80x24(services, cockpit, tmp_path):
    test_proposals._seed(services)
    app = cockpit()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await footer_shown(pilot)
        assert_snapshot(app, "proposals_80x24", tmp_path)


async def test_snapshot_memory_with_history(services, cockpit, tmp_path):
    test_memory._seed(services)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("down", "down", "down")
        await settle(pilot)
        assert_snapshot(app, "memory_history", tmp_path)


async def test_snapshot_traces(services, clock, cockpit, tmp_path):
    test_traces._seed(services, clock)
    app = cockpit()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        assert_snapshot(app, "traces", tmp_path)
