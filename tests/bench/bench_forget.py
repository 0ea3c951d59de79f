"""Forget by phrase on a large home: how long the preview (finding every copy) and the erase
(SQLite, FTS merge, vectors, files, WAL) take.

    python -m tests.bench.bench_forget                      # 100k messages + 10k entries
    python -m tests.bench.bench_forget --messages 10000 --entries 1000

Vectors are resampled (see tests/bench/synthetic.py --fast-vectors): the forget's work does not
depend on what the vectors mean. The secret is said in 5 messages spread over the archive.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import argparse
import time
from datetime import datetime, timedelta

from core.archive.records import CaptureIn
from core.memory.forget import forget_matching, preview
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
SECRET = "Le code du coffre de mamie Hortense est 8841-QUETZAL"


def main() -> None:
    """Build a home, say the secret five times, then time preview and erase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=10_000)
    args = parser.parse_args()
    with bench_home() as home:
        services = open_bench_services(home, clock=FixedClock(NOW))
        built = build_archive(services, args.messages, fast=True, end=NOW)
        entries = random_entries(args.entries, now=NOW)
        insert_entries(services, entries, embed_entry_texts(services, entries, fast=True))
        said = [
            CaptureIn(surface="telegram", chat_id=f"secret-{n}", message_id=str(n),
                      sender="Camille", text=f"Au fait : {SECRET} (n° {n})",
                      sent_at=NOW - timedelta(days=30 * n))
            for n in range(5)
        ]  # fmt: skip
        services.archive.store_batch(said)
        services.archive.index_pending()
        print(f"home: {args.messages:,} messages + {args.entries:,} entries ({built:.0f} s)")
        started = time.perf_counter()
        plan = preview(services, phrase="code du coffre de mamie hortense")
        found = time.perf_counter() - started
        started = time.perf_counter()
        report = forget_matching(services, "code du coffre de mamie hortense")
        erased = time.perf_counter() - started
        print(f"preview: {len(plan.messages)} messages found in {found:.2f} s")
        print(f"erase:   {report.removed_captures} messages erased in {erased:.2f} s "
              f"(scan again, SQLite, FTS optimize, vectors, files, WAL truncate)")  # fmt: skip
        services.close()


if __name__ == "__main__":
    main()
