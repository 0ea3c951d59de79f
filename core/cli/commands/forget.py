"""`elora forget MEMORY_ID` / `elora forget --matching PHRASE`: erase for real, after a preview
of every copy (asks first on a terminal)."""

from __future__ import annotations

import sys

NAME = "forget"
HELP = "forget a memory, or every copy of a phrase, irreversibly (shows what goes first)"
WHOLE_MESSAGES = (
    "A message that contains the phrase is erased whole (its text is the phrase's context), "
    "with its chunks, vectors and conversation turns."
)
MAX_DATES = 8
NO_UNDO = (
    "`elora forget` keeps no undo: it would live only in the memory of this one-shot process, "
    "never on disk. (Forgetting a memory in the cockpit or the bot can be undone there for "
    "ELORA_UNDO_MINUTES; a forget that erases messages cannot be undone anywhere.)"
)


def configure(parser) -> None:
    parser.add_argument("memory_id", nargs="?", help="exact memory_id (see `elora memories`)")
    parser.add_argument(
        "--matching",
        metavar="PHRASE",
        help="erase every copy of a phrase, case and accents aside: messages, memories, "
        "proposals, session memory, conversation windows, traces and files under ELORA_HOME",
    )
    parser.add_argument(
        "--with-sources",
        action="store_true",
        help="also erase the messages the memory came from and every message containing its text",
    )
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--dry-run", action="store_true", help="only show what would be erased")
    parser.add_argument("--json", action="store_true", help="print the preview or outcome as JSON")


def run(args) -> int:
    from core import app
    from core.cli.context import print_json, services

    if (args.memory_id is None) == (args.matching is None) or (args.matching and args.with_sources):
        print("elora: give a memory id (optionally --with-sources) or --matching PHRASE",
              file=sys.stderr)  # fmt: skip
        return 2
    svc = services()
    try:
        plan = app.forget_preview(svc, phrase=args.matching, memory_id=args.memory_id,
                       with_sources=args.with_sources)  # fmt: skip
        if args.matching and plan.is_empty():
            print("elora: nothing to forget: no copy of that phrase was found", file=sys.stderr)
            return 1
        if args.dry_run:
            if args.json:
                print_json(plan.to_json())
            else:
                print("\n".join(describe(plan)))
            return 0
        if not args.yes:
            answer = _confirm(plan, args)
            if answer is not None:
                return answer
        if args.matching:
            report = app.forget_matching(svc, args.matching)
        else:
            report = app.forget(svc, args.memory_id, with_sources=args.with_sources)
    finally:
        svc.close()
    if args.json:
        print_json(report.to_json())
    else:
        print("\n".join(outcome(report, args.with_sources)))
    return 0


def _confirm(plan, args) -> int | None:
    """Show the preview and ask on a terminal; an exit code when the answer is no."""
    if not sys.stdin.isatty():
        print("elora: refusing to forget without confirmation; pass --yes", file=sys.stderr)
        return 2
    print("\n".join(describe(plan)))
    print(NO_UNDO)
    what = args.memory_id or "every copy listed above"
    answer = input(f"Forget {what}? This cannot be undone. [y/N] ")
    if answer.strip().lower() not in ("y", "yes", "o", "oui"):
        print(f"kept {args.memory_id or 'everything'}")
        return 1
    return None


def describe(plan) -> list[str]:
    """The preview: messages by chat and date, memories, proposals, session memory, windows,
    traces and files (ids, dates and paths; never the text)."""
    lines = ["This forget erases:"]
    if plan.messages:
        lines.append(f"  {len(plan.messages)} message(s). {WHOLE_MESSAGES}")
        by_chat: dict[tuple[str, str], list] = {}
        for m in plan.messages:
            by_chat.setdefault((m.surface, m.chat_id), []).append(m)
        for (surface, chat), found in by_chat.items():
            dates = ", ".join(
                f"{m.sent_at}{'' if m.role == 'user' else f' ({m.role})'}"
                f"{' (document)' if m.kind == 'document' else ''}"
                f"{' (source)' if m.why == 'source' else ''}"
                for m in found[:MAX_DATES]
            )
            more = f" and {len(found) - MAX_DATES} more" if len(found) > MAX_DATES else ""
            lines.append(f"    {surface} chat {chat}: {dates}{more}")
    why = {"named": "", "contains": " (contains it)",
           "derived": " (drawn only from erased messages)"}  # fmt: skip
    for e in plan.entries:
        lines.append(f"  memory {e.memory_id}{why[e.why]}")
    if plan.proposals:
        lines.append(f"  {len(plan.proposals)} proposal(s)")
    for s in plan.sessions:
        lines.append(
            f"  session memory {s.source_id} (chat {s.chat_id}): {len(s.chunk_ids)} chunk(s)"
        )
    for t in plan.threads:
        lines.append(f"  conversation {t.what}")
    if plan.traces:
        lines.append(f"  text in {len(plan.traces)} trace(s) (their costs and timings stay)")
    if plan.links:
        lines.append(f"  {len(plan.links)} link note(s)")
    if plan.versions:
        lines.append(f"  {len(plan.versions)} recorded version(s) of memories")
    if plan.undo_actions:
        lines.append(f"  {len(plan.undo_actions)} undo record(s)")
    for f in plan.files:
        if f.action != "left":
            lines.append(f"  file {f.relative}: {f.action} ({f.what})")
    left = [f.relative for f in plan.files if f.action == "left"]
    if left:
        lines.append(
            "Left as they are (not written by Elora; edit them yourself): " + ", ".join(left)
        )
    if len(lines) == 1:
        lines.append("  nothing")
    return lines


def outcome(report, with_sources: bool) -> list[str]:
    """What was erased, in a few lines."""
    if report.memory_id is not None and not with_sources:
        lines = [f"forgot {report.memory_id}"]
    elif report.memory_id is not None:
        lines = [f"forgot {report.memory_id} and {report.removed_captures} message(s)"]
    else:
        lines = [
            f"forgot every copy: {report.removed_captures} message(s), "
            f"{len(report.removed_entries)} memor(ies), {report.removed_proposals} proposal(s), "
            f"{report.removed_session_chunks} session chunk(s), {report.scrubbed_threads} "
            f"conversation(s), {report.scrubbed_traces} trace(s), {len(report.files)} file(s)"
        ]
    if report.left_files:
        lines.append("still in files Elora did not write: " + ", ".join(report.left_files))
    if not report.vectors_erased:
        lines.append("the vector store was unreachable: run `elora reindex` (it holds no text)")
    if not report.wal_truncated:
        lines.append("another Elora process is reading the database: run this again once it stops")
    return lines
