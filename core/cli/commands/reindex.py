"""`elora reindex`: rebuild every vector with the configured embedder."""

from __future__ import annotations

NAME = "reindex"
HELP = "rebuild all vectors with the configured embedding model (after a model change)"


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    from core.cli.context import print_json, services
    from core.cli.progress import progress_bar

    svc = services()
    try:
        svc.vectorspace.reset_all()
        total = svc.archive.mark_all_pending()
        with progress_bar("reindexing chunks", total, unit="chunks") as advance:
            done = svc.archive.index_pending(on_progress=advance)
    finally:
        svc.close()
    outcome = {"chunks": total, "indexed": done, "embedder": svc.vectorspace.signature}
    if args.json:
        print_json(outcome)
    else:
        print(f"reindexed {done} of {total} chunks with {outcome['embedder']}")
    return 0 if done == total else 1
