"""Archive recall on a labelled set: hybrid vs vector-only vs BM25-only search_archive.

    python -m tests.bench.bench_recall                 # build, embed (~1-2 min), measure
    python -m tests.bench.bench_recall --home /tmp/rs  # keep the built home and reuse it
    python -m tests.bench.bench_recall --misses        # list what hybrid@10 missed

Every question goes through the same path in all three modes: its period is parsed with
parse_period at a fixed NOW (as the classifier does) and passed as `window`, the query vector is
the real e5 embedding. A question counts as found at k when one of the first k chunks covers a
labelled message. The set is split in two halves (even / odd positions) so a change tuned on one
half can be checked on the other.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import argparse
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path

from core.recall.archive_search import search_archive
from core.recall.timeparse import parse_period
from tests.bench import recall_set, synthetic
from tests.fakes import FixedClock

MODES = ("hybrid", "vector", "lexical")
KS = (5, 10)


def prepare(home: Path, data: recall_set.RecallSet, embedder):
    """Services on `home`, archived and indexed (reused when already built)."""
    services = synthetic.open_bench_services(home, embedder, FixedClock(recall_set.NOW))
    if services.archive.counts()["captures"] == 0:
        start = time.perf_counter()
        synthetic.store_archive(services, data.captures, batch=len(data.captures))
        services.archive.index_pending(batch_size=128)
        print(f"archived and embedded in {time.perf_counter() - start:.0f} s")
    counts = services.archive.counts()
    print(
        f"archive: {counts['captures']} messages, {counts['chunks']} chunks, "
        f"{len(data.questions)} questions"
    )
    return services


def evaluate(services, data: recall_set.RecallSet, modes=MODES) -> list[dict]:
    """Per question and mode: found at each k, and the rank of the first covering chunk."""
    results = []
    for n, question in enumerate(data.questions):
        window = parse_period(question.text, recall_set.NOW)
        vector = services.embedder.embed_query(question.text)
        wanted = {data.where[key] for key in question.answers}
        row = {"n": n, "question": question, "window": window, "modes": {}}
        for mode in modes:
            found = {}
            for k in KS:
                hits = search_archive(services, question.text, vector, k, window=window, mode=mode)
                ranks = [
                    i
                    for i, hit in enumerate(hits, 1)
                    if any((hit.chat_id, m) in wanted for m in hit.message_ids)
                ]
                found[k] = bool(ranks)
                if k == max(KS):
                    found["rank"] = ranks[0] if ranks else None
                    found["top"] = hits[:3]
            row["modes"][mode] = found
        results.append(row)
    return results


def table(results: list[dict], title: str, modes=MODES) -> None:
    """Recall@k and MRR@10 per mode, overall and per tag."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in results:
        groups["all"].append(row)
        for tag in row["question"].tags:
            groups[tag].append(row)
    head = "".join(f" | {m:^21}" for m in modes)
    print(f"\n{title}\n{'':17}{head}")
    print(f"{'group':12} {'n':>3} " + " | R@5   R@10  MRR@10" * len(modes))
    for group in ("all", *recall_set.TAGS):
        rows = groups.get(group, [])
        if not rows:
            continue
        cells = []
        for mode in modes:
            r5 = sum(r["modes"][mode][5] for r in rows) / len(rows)
            r10 = sum(r["modes"][mode][10] for r in rows) / len(rows)
            mrr = sum(1 / r["modes"][mode]["rank"] for r in rows if r["modes"][mode]["rank"])
            cells.append(f" | {r5:5.2f} {r10:5.2f} {mrr / len(rows):6.2f}")
        print(f"{group:12} {len(rows):3} " + "".join(cells))


def misses(results: list[dict]) -> None:
    """The questions hybrid@10 missed, with what it returned first."""
    print("\nmissed by hybrid@10:")
    for row in results:
        if row["modes"]["hybrid"][10]:
            continue
        q = row["question"]
        others = ", ".join(m for m in ("vector", "lexical") if row["modes"][m][10])
        print(f"- {q.text!r} {q.tags} window={row['window'] and row['window'].label!r}")
        print(f"    found by: {others or 'neither'}")
        for hit in row["modes"]["hybrid"]["top"]:
            text = hit.text.replace("\n", " / ")[:110]
            print(f"    {hit.score:.3f} sim={hit.similarity} lex={hit.lexical:.2f} {text}")


def main(argv: list[str] | None = None) -> None:
    """Build (or reuse) the labelled archive and print recall tables per mode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="build into / reuse this home (not ./data)")
    parser.add_argument("--background", type=int, default=5000, help="lines of chatter")
    parser.add_argument("--seed", type=int, default=2025, help="placement of the chatter")
    parser.add_argument("--misses", action="store_true", help="list hybrid@10 misses")
    args = parser.parse_args(argv)

    from tests.bench.synthetic import local_embedder

    data = recall_set.build(background=args.background, seed=args.seed)
    if args.home:
        args.home.mkdir(parents=True, exist_ok=True)
        (args.home / "identity.md").write_text(synthetic.IDENTITY, encoding="utf-8")
        os.environ["ELORA_HOME"] = str(args.home)
    with nullcontext(args.home) if args.home else synthetic.bench_home() as home:
        services = prepare(home, data, local_embedder())
        results = evaluate(services, data)
        services.close()
    table(results, "all questions")
    table([r for r in results if r["n"] % 2 == 0], "half A (even positions)")
    table([r for r in results if r["n"] % 2 == 1], "half B (odd positions)")
    if args.misses:
        misses(results)


if __name__ == "__main__":
    main()
