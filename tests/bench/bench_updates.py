"""Knowledge updates: is the current value of a changed fact in the pack, and before the stale ones?

    python -m tests.bench.bench_updates                        # generate, import, ask (CLI)
    python -m tests.bench.bench_updates --in-process           # same, build_pack in this process
    python -m tests.bench.bench_updates --out /tmp/upd --keep-home
    python -m tests.bench.bench_updates --home /tmp/upd/home --no-import --half odd

The facts (tests/bench/update_facts.py) are written into a Telegram Desktop export of five
chats over ten months, among FR/EN small talk; `elora import` reads it and every question goes
through `elora context "QUESTION" --json`, as tools and pack_eval do. The pack is read generically:
every object holding a chat id and message id(s) is an item, in document order. Per question:

  current in pack     a message stating the current value is in the pack
  current first       the first such message comes before every message of a stale value
  stale only          a stale value is in the pack and the current one is not

A stale value is any other value the fact had, including old values mentioned after the change.
`--half even|odd` keeps every other fact, to tune on one half and check on the other.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from tests.bench.synthetic import chatter
from tests.bench.update_facts import CHATS, FACTS

OPERATOR = ("Camille Roche", "user1001")
START, END = datetime(2024, 9, 1), datetime(2025, 6, 15)
LANG = {"lea": "fr", "hugo": "fr", "sam": "en", "maman": "fr", "notes": "fr"}


def _export_message(mid: int, when: datetime, who: tuple[str, str], text: str) -> dict:
    return {
        "id": mid,
        "type": "message",
        "date": when.isoformat(timespec="seconds"),
        "date_unixtime": str(int((when - datetime(1970, 1, 1)).total_seconds())),
        "from": who[0],
        "from_id": who[1],
        "text": text,
        "text_entities": [{"type": "plain", "text": text}],
    }


def build(out: Path, seed: int = 13) -> tuple[Path, list[dict]]:
    """Write the export and the questions; return the export's path and the questions."""
    rng = random.Random(seed)
    lines: dict[str, list[tuple[datetime, str, str, str | None]]] = {c: [] for c in CHATS}
    for fact in FACTS:
        for when, who, text, value in fact.says:
            lines[fact.chat].append(
                (datetime.fromisoformat(when), who, text, f"{fact.key}={value}")
            )
        for when, who, text, value in fact.stale:
            tag = f"{fact.key}~{value}"  # an old value mentioned again: stale, not a statement
            lines[fact.chat].append((datetime.fromisoformat(when), who, text, tag))
        for when, who, text in fact.noise:
            lines[fact.chat].append((datetime.fromisoformat(when), who, text, None))
    for chat in CHATS:
        day = START
        while day < END:  # bursts of small talk, a few times a week
            day += timedelta(days=rng.choice([1, 1, 2, 3]), minutes=rng.randint(0, 600))
            for n in range(rng.randint(2, 6)):
                who = "me" if chat == "notes" or rng.random() < 0.5 else chat
                lang = LANG[chat] if rng.random() < 0.85 else ("en" if LANG[chat] == "fr" else "fr")
                lines[chat].append((day + timedelta(minutes=2 * n), who, chatter(rng, lang), None))
    chats, where = [], {}
    mid = 1
    for chat, (name, chat_id, kind) in CHATS.items():
        contact = (name, f"user{chat_id}") if name else OPERATOR
        messages = []
        for when, who, text, tag in sorted(lines[chat], key=lambda x: x[0]):
            messages.append(_export_message(mid, when, OPERATOR if who == "me" else contact, text))
            if tag:
                where.setdefault(tag, []).append((str(chat_id), str(mid)))
            mid += 1
        chats.append({"name": name, "type": kind, "id": chat_id, "messages": messages})
    export = {
        "personal_information": {"user_id": 1001, "first_name": "Camille", "last_name": "Roche"},
        "chats": {"about": "", "list": chats},
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / "result.json"
    path.write_text(json.dumps(export, ensure_ascii=False, indent=1), encoding="utf-8")
    questions = []
    for n, fact in enumerate(FACTS):
        values = {v for *_, v in fact.says} | {v for *_, v in fact.stale}
        current = where[f"{fact.key}={fact.current}"]
        stale = [
            m
            for v in values - {fact.current}
            for tag in (f"{fact.key}={v}", f"{fact.key}~{v}")
            for m in where.get(tag, [])
        ]
        for lang, question in zip(("en", "fr"), fact.ask, strict=True):
            questions.append({
                "fact": fact.key, "n": n, "lang": lang, "question": question,
                "changes": len(fact.says) - 1, "current": current, "stale": stale,
            })  # fmt: skip
    (out / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8"
    )
    return path, questions


def ranked(pack) -> list[tuple[str, str]]:
    """(chat id, message id) of every item, in document order, each message once."""
    found: list[tuple[str, str]] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            chat = node.get("chat_id")
            ids = node.get("message_ids") or (
                [node["message_id"]] if node.get("message_id") is not None else []
            )
            if chat is not None:
                found.extend((str(chat), str(m)) for m in ids)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(pack)
    return list(dict.fromkeys(found))


def judge(question: dict, order: list[tuple[str, str]]) -> dict:
    """current in pack, current first, stale only — for one question's pack."""
    current = {tuple(m) for m in question["current"]}
    stale = {tuple(m) for m in question["stale"]}
    rank = {m: i for i, m in enumerate(order)}
    first_current = min((rank[m] for m in current if m in rank), default=None)
    first_stale = min((rank[m] for m in stale if m in rank), default=None)
    return {
        "current_in_pack": first_current is not None,
        "current_first": first_current is not None
        and (first_stale is None or first_current < first_stale),
        "stale_only": first_current is None and first_stale is not None,
    }


class CliAsker:
    """`elora import` and `elora context --json`, each a fresh process, as pack_eval runs them."""

    def __init__(self, home: Path):
        self.env = dict(os.environ, ELORA_HOME=str(home))
        self.elora = shutil.which("elora") or str(Path(sys.executable).parent / "elora")

    def load(self, export: Path) -> None:
        subprocess.run([self.elora, "import", str(export)], env=self.env, check=True)

    def ask(self, question: str) -> dict:
        done = subprocess.run(
            [self.elora, "context", question, "--json"],
            env=self.env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        return json.loads(done.stdout)


class InProcessAsker:
    """The same through build_pack in this process (fast iterations)."""

    def __init__(self, home: Path):
        from core.config import load_settings
        from core.services import Services

        os.environ["ELORA_HOME"] = str(home)
        self.services = Services(load_settings(home=home))

    def load(self, export: Path) -> None:
        from core.importers.runner import import_paths

        import_paths(self.services, [export])

    def ask(self, question: str) -> dict:
        from core.recall.pack import build_pack

        return json.loads(json.dumps(build_pack(self.services, question).to_json(), default=str))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="keep the export, questions and results here")
    ap.add_argument("--home", help="ELORA_HOME (default: a fresh temporary one)")
    ap.add_argument("--no-import", action="store_true", help="reuse --home as imported before")
    ap.add_argument("--keep-home", action="store_true")
    ap.add_argument("--in-process", action="store_true", help="build_pack here, not the CLI")
    ap.add_argument("--half", choices=["even", "odd"], help="every other fact only")
    ap.add_argument("--misses", action="store_true", help="print the questions that failed")
    a = ap.parse_args(argv)
    out = Path(a.out or tempfile.mkdtemp(prefix="elora-updates-"))
    home = Path(a.home) if a.home else out / "home"
    export, questions = build(out)
    if a.half:
        questions = [q for q in questions if q["n"] % 2 == (a.half == "odd")]
    asker = (InProcessAsker if a.in_process else CliAsker)(home)
    if not a.no_import:
        started = time.perf_counter()
        asker.load(export)
        print(f"imported in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    rows = []
    for q in questions:
        started = time.perf_counter()
        pack = asker.ask(q["question"])
        row = {**q, **judge(q, ranked(pack)), "seconds": time.perf_counter() - started}
        rows.append(row)
        if a.misses and not row["current_first"]:
            order = ranked(pack)
            print(f"MISS {q['fact']} [{q['lang']}] {q['question']} current={q['current']} "
                  f"stale={q['stale']} top={order[:6]}")  # fmt: skip
    with (out / "results.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    report(rows)
    if not a.keep_home and not a.home:
        shutil.rmtree(home, ignore_errors=True)
    return 0


def report(rows: list[dict]) -> None:
    """One line per group: questions, current in pack, current first, stale only."""
    groups = {
        "all": rows,
        "asked in English": [r for r in rows if r["lang"] == "en"],
        "asked in French": [r for r in rows if r["lang"] == "fr"],
        "changed once": [r for r in rows if r["changes"] == 1],
        "changed twice": [r for r in rows if r["changes"] >= 2],
    }
    print("| group | n | current in pack | current first | stale only | s/query |")
    print("|---|---|---|---|---|---|")
    for name, group in groups.items():
        if not group:
            continue
        n = len(group)
        shares = {k: sum(r[k] for r in group) / n for k in ("current_in_pack", "current_first")}
        stale = sum(r["stale_only"] for r in group) / n
        seconds = sum(r["seconds"] for r in group) / n
        print(
            f"| {name} | {n} | {shares['current_in_pack']:.2f} | {shares['current_first']:.2f} | "
            f"{stale:.2f} | {seconds:.2f} |"
        )


if __name__ == "__main__":
    sys.exit(main())
