"""`elora reindex`: rebuild every vector from SQLite, whatever state the vector store is in."""

from __future__ import annotations

NAME = "reindex"
HELP = (
    "rebuild all vectors from SQLite with the configured embedding model (after a model "
    "change, or when `elora doctor` finds the vector store damaged or incomplete)"
)


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services
    from core.cli.progress import progress_bar

    svc = services()
    try:
        report = app.reindex(
            svc, say=(lambda line: None) if args.json else print, progress=progress_bar
        )
    finally:
        svc.close()
    if args.json:
        print_json(report.to_json())
    else:
        print(
            f"reindexed {report.indexed:,} of {report.chunks:,} chunks, "
            f"{report.entries_indexed:,} of {report.entries:,} memory entries and "
            f"{report.session_indexed:,} of {report.session_chunks:,} session chunks "
            f"with {report.embedder}"
        )
        if not report.complete:
            print(
                "some vectors are still missing: run `elora reindex` again once the embedder works"
            )
    return 0 if report.complete else 1
