"""`elora audit [--json]`: the per-tier memory scorecard."""

from __future__ import annotations

NAME = "audit"
HELP = "per-tier scorecard: entries, schema compliance, staleness, queue, promotions, profile"


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true")


def run(args) -> int:
    from core import app
    from core.cli.context import console, print_json, services

    svc = services()
    try:
        report = app.audit(svc)
    finally:
        svc.close()
    if args.json:
        print_json(report)
        return 0
    from rich.table import Table

    table = Table(title="memory audit")
    for col in ("tier", "entries", "active", "superseded", "schema ok", "stale"):
        table.add_column(col, justify="right")
    for tier, card in report["tiers"].items():
        compliance = card["schema_compliance"]
        staleness = card["staleness"]
        table.add_row(
            tier, str(card["entries"]), str(card["active"]), str(card["superseded"]),
            "-" if compliance is None else f"{compliance:.0%}",
            "-" if staleness is None else f"{staleness:.0%}",
        )  # fmt: skip
    out = console()
    out.print(table)
    q = report["proposals"]
    out.print(
        f"proposals: {q['pending']} pending, {q['recommended']} recommended, {q['rejected']} rejected"
        + (
            f" (oldest open: {q['oldest_open_days']} days)"
            if q["oldest_open_days"] is not None
            else ""
        )
    )
    out.print(f"promotions (7 days): {report['promotion_7d']}")
    env = report["environment"]
    buckets = ", ".join(f"{b} {n}" for b, n in sorted(env["by_bucket"].items())) or "none"
    out.print(
        f"environment: {env['predictions']} predictions ({buckets}); "
        f"{env['proposals']['open']} proposed, waiting for review"
    )
    fading = report["fading"]
    out.print(
        f"fading: {fading['due_soon']} due within {fading['due_within_days']} days, "
        f"{fading['faded']} faded ({fading['faded_7d']} this week), "
        f"{fading['restored_7d']} restored this week"
    )
    if report["empty_tiers"]:
        out.print("empty tiers: " + ", ".join(report["empty_tiers"]))
    stale = report["capability_profile"]["stale"]
    out.print("capability profile: " + (f"stale: {', '.join(stale)}" if stale else "fresh"))
    return 0
