"""Memory over time on a large home: how long the `environment` job (every archived message
read for recurring outcomes, a month of traces), the `fade` job (recalls counted from traces,
due entries archived) and the audit's fading figures take.

    python -m tests.bench.bench_memory_over_time                    # 100k messages, 10k entries
    python -m tests.bench.bench_memory_over_time --messages 10000 --entries 1000 --traces 2000

Vectors are resampled (see tests/bench/synthetic.py): neither job embeds anything but what it
archives (a faded entry's metadata), so what the vectors mean does not matter here.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import argparse
import asyncio
import random
import time
from datetime import datetime, timedelta

from core.audit import audit
from core.learning.environment import observe
from core.memory.fading import fade_due
from tests.bench.synthetic import (
    bench_home,
    build_archive,
    embed_entry_texts,
    insert_entries,
    open_bench_services,
    random_entries,
)
from tests.fakes import FixedClock

NOW = datetime(2025, 7, 2, 10, 0)


def main() -> None:
    """Build a home with traces that recall entries, then time the two jobs and the audit."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--traces", type=int, default=20_000)
    args = parser.parse_args()
    with bench_home() as home:
        clock = FixedClock(NOW)
        services = open_bench_services(home, clock=clock)
        built = build_archive(services, args.messages, fast=True, end=NOW)
        entries = random_entries(args.entries, now=NOW)
        insert_entries(services, entries, embed_entry_texts(services, entries, fast=True))
        rng = random.Random(3)
        ids = [e["memory_id"] for e in entries][: len(entries) // 5]  # a fifth is ever recalled
        for n in range(args.traces):  # requests over the last month, each recalling a few
            clock.moment = NOW - timedelta(minutes=2 * (args.traces - n))
            services.traces.record(surface="telegram", chat_id="201",
                                   classification={"intent": "question_about_past"},
                                   pack={"items": ["identity", *rng.sample(ids, 4)]})  # fmt: skip
        clock.moment = NOW
        print(f"home: {args.messages:,} messages, {args.entries:,} entries, "
              f"{args.traces:,} traces ({built:.0f} s)")  # fmt: skip

        started = time.perf_counter()
        observed = asyncio.run(observe(services))
        took = time.perf_counter() - started
        print(f"environment job: {observed['patterns']} patterns, {observed['proposed']} "
              f"proposed in {took:.2f} s")  # fmt: skip

        started = time.perf_counter()
        faded = fade_due(services)
        took = time.perf_counter() - started
        print(f"fade job:        {faded['recalls_counted']:,} recalls counted, "
              f"{faded['faded']:,} entries faded in {took:.2f} s")  # fmt: skip

        started = time.perf_counter()
        figures = audit(services)["fading"]
        took = time.perf_counter() - started
        print(f"audit:           {figures['due_soon']:,} due soon, {figures['faded']:,} faded "
              f"(whole audit {took:.2f} s)")  # fmt: skip
        services.close()


if __name__ == "__main__":
    main()
