"""Cockpit responsiveness on a large memory: the Memory screen's page loads at 100k entries.

    python -m tests.bench.bench_cockpit                  # 100k entries, 20 timed page moves
    python -m tests.bench.bench_cockpit --entries 10000 --moves 50

Entries are inserted straight into SQLite (no vectors: browsing and full-text search never
embed), then the real app runs headless and the time from a key press (`]`, `[`, a filter,
a full-text search) to the table showing its new rows is measured, end to end: worker thread,
queries, and the UI update. The database queries alone are timed as well.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path


def _summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"{name:<28} n={len(ms):<3} median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms"


async def _ui(services, moves: int) -> list[str]:
    from textual.widgets import DataTable, Input

    from cockpit.app import Cockpit
    from tests.cockpit.support import settle, table_keys

    app = Cockpit(services, refresh_seconds=None)
    out = []
    async with app.run_test(size=(120, 36)) as pilot:
        started = time.perf_counter()
        await pilot.press("2")
        await settle(pilot)
        out.append(_summary("open Memory (first page)", [time.perf_counter() - started]))

        async def timed(*keys: str, check: bool = True) -> float:
            table = app.screen.query_one(DataTable)
            before = table_keys(table)
            started = time.perf_counter()
            await pilot.press(*keys)
            await settle(pilot)
            assert not check or table_keys(table) != before, f"{keys} changed nothing"
            return time.perf_counter() - started

        out.append(_summary("next page ]", [await timed("right_square_bracket")
                                            for _ in range(moves)]))  # fmt: skip
        out.append(_summary("previous page [", [await timed("left_square_bracket")
                                                for _ in range(moves)]))  # fmt: skip
        # Deep pages: jump to the middle of the store by hand, then page from there.
        screen = app.screen
        screen.page_start = (screen.total // 2) // 50 * 50
        screen.action_refresh_data()
        await settle(pilot)
        out.append(_summary("next page ] (middle)", [await timed("right_square_bracket")
                                                     for _ in range(moves)]))  # fmt: skip
        # semantic (every bulk entry, a filtered count), then episodic (none of them)
        out.append(_summary("tier filter t", [await timed("t"), await timed("t")]))
        await pilot.press("t", "t", "t", "t")  # back to any tier
        await settle(pilot)
        app.screen.query_one("#search", Input).focus()
        searches = []
        for words in ("4242", "number 777", "bulk fact number"):  # the last matches them all
            app.screen.query_one("#search", Input).value = words
            searches.append(await timed("enter", check=False))
            await pilot.press("escape")
            await settle(pilot)
        out.append(_summary("full-text search", searches))
    return out


def _queries(services, moves: int) -> list[str]:
    memory = services.memory
    total = memory.count("active")
    runs = {
        "list+count, page 1": 0,
        "list+count, middle": total // 2,
        "list+count, last": total - 50,
    }
    out = []
    for name, offset in runs.items():
        seconds = []
        for _ in range(moves):
            started = time.perf_counter()
            memory.list(status="active", limit=50, offset=offset)
            memory.count("active")
            seconds.append(time.perf_counter() - started)
        out.append(_summary(name, seconds))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--moves", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ELORA_HOME"] = str(Path(tmp) / "home")
        from core.config import load_settings
        from core.services import Services
        from tests.cockpit.support import bulk_entries

        services = Services(load_settings())
        started = time.perf_counter()
        for start in range(0, args.entries, 10_000):
            bulk_entries(services, min(10_000, args.entries - start), first=start)
        print(f"inserted {args.entries:,} entries in {time.perf_counter() - started:.1f} s")
        for line in _queries(services, args.moves):
            print(line)
        for line in asyncio.run(_ui(services, args.moves)):
            print(line)
        services.close()


if __name__ == "__main__":
    main()
