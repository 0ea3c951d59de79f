"""Load: the real `elora bot` process, N users x M messages sent at once, an instant model.

    python -m tests.bench.bench_load                          # 10 users x 30 messages
    python -m tests.bench.bench_load --users 5 --messages 40 --history 10000
    python -m tests.bench.bench_load --extractor heuristic    # no LITE extraction call
    python -m tests.bench.bench_load --reply-chars 800        # answers of a paragraph
    python -m tests.bench.bench_load --configs sqlite:1,postgres:1,postgres:2 --database-url auto

The bot is started as a process (`python -m core.cli.main bot`) on a fresh ELORA_HOME, long
polling the fake Bot API (tests/telegram_server.py) and answering through LiteLLM against the
local OpenAI-compatible server (tests/llm_server.py), which answers at once. After one warm-up
message, every user's messages are queued within the same instant; the bench waits for every
reply, stops the bot with SIGTERM, and then reads the home:

- throughput: messages answered per second over the burst;
- reply latency p50/p95: from the moment the burst was queued to each reply's sendMessage;
- pipeline overhead p50/p95: each trace's latency minus the time inside its model calls;
- the archive check: every message and every reply archived exactly once, no spooled capture,
  no "database is locked" in the bot's log.

Targets (2 cores, 10 x 30): >= 15 messages/s, reply p95 <= 25 s, overhead p95 <= 300 ms, zero
spooled, exact archive. The process list is built by `start_bots`, so more workers on one home
(issue 16) only add processes to it.

`--configs` runs several set-ups one after the other in one run and prints them side by side:
`sqlite:1` is one bot on SQLite with embedded Chroma (the default home), `postgres:N` is N bot
workers on one PostgreSQL (`--database-url`: a server, each set-up in a schema of its own, or
`auto` for a throwaway cluster) and one `chroma run` server started for the bench.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.bench.synthetic import bench_home, percentile
from tests.llm_server import FakeLLMServer, last_user_text
from tests.telegram_server import FakeTelegram

TREE = Path(__file__).resolve().parents[2]  # the checkout this bench belongs to
TOKEN = "123456789:AABenchLoadTokenForTests_abcdefghijk"
CLASSIFIER_MARK = "You classify one message sent to a personal assistant"
EXTRACTION_MARK = "decide what is worth remembering"
CONTRADICTION_MARK = "Say how the new one relates to the existing one"
VERDICT = json.dumps(
    {"intent": "task", "complexity": "low", "memory_need": "L2", "tiers": ["semantic"],
     "confidence": 0.9}
)  # fmt: skip
FIRST_USER = 5_000_001
STARTUP = 180.0
TARGETS = {"rate": 15.0, "reply_p95": 25.0, "overhead_p95": 300.0}
TAG = re.compile(r"#(u\d+m\d+)")

TEXTS = [
    "what did I say about the dentist last week?",
    "qu'est-ce que Léa m'a dit hier ?",
    "de quoi on a parlé avec Hugo la semaine dernière ?",
    "Je suis chez Nora ce soir, elle a adopté un chat qui s'appelle Biscotte.",
    "The plumber comes on Thursday at 9, I need to be home early.",
    "et pour la plante ?",
    "can you plan a dinner with Léa on Friday?",
    "quel est mon film préféré ?",
    "écris un message à Hugo pour décaler le ciné",
    "what's left to do on the payment bug?",
    "salut !",
    "thanks!",
]


# What a longer answer says after its first sentence (--reply-chars), cut to length.
ANSWER_BODY = (
    "D'après ce que tu m'as dit la semaine dernière, le rendez-vous chez le garagiste est "
    "jeudi à 9 h et Hugo garde les enfants ce soir-là. I would start with the payment bug: "
    "the retry loop still sends the receipt twice when the bank answers late, and the fix is "
    "small. Pour le dîner avec Léa, vendredi convient, le restaurant du quai ferme à 22 h. "
    "Tell me if you want me to draft the message to the team or keep a note of the plan. "
)


def responder(body: dict[str, Any], reply_chars: int = 0) -> str:
    """The instant model: the classifier's verdict, no candidates, or an answer naming its tag."""
    text = last_user_text(body)
    if CLASSIFIER_MARK in text:
        return VERDICT
    if EXTRACTION_MARK in text:
        return '{"candidates": []}'
    if CONTRADICTION_MARK in text:
        return '{"relation": "none"}'
    tag = TAG.search(text)
    return answer_to(tag.group(1), reply_chars) if tag else "Noted."


def answer_to(tag: str, reply_chars: int = 0) -> str:
    """The answer to the message tagged `tag`: a sentence naming it, then about `reply_chars`
    in all when given (real answers are paragraphs, and each is embedded)."""
    answer = f"Réponse à #{tag}."
    if reply_chars > len(answer):
        body = ANSWER_BODY * (reply_chars // len(ANSWER_BODY) + 1)
        answer += " " + body[: reply_chars - len(answer) - 1].rsplit(" ", 1)[0]
    return answer


def update(user_id: int, message_id: int, text: str) -> dict[str, Any]:
    """A private-chat text message update from an allowlisted user."""
    person = {"id": user_id, "is_bot": False, "first_name": f"User{user_id % 1000}",
              "language_code": "fr"}  # fmt: skip
    chat = {"id": user_id, "type": "private", "first_name": person["first_name"]}
    return {"message": {"message_id": message_id, "date": int(time.time()), "chat": chat,
                        "from": person, "text": text}}  # fmt: skip


def bot_env(
    home: Path, telegram: FakeTelegram, llm: FakeLLMServer, users: list[int], args,
    stores: dict[str, str] | None = None,
):  # fmt: skip
    """The environment of a bot process on `home` (and on the `stores` settings, if any)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELORA_")}
    # The bot runs in its home: the code it imports is this tree's, not whichever Elora is
    # installed (an A/B run from another checkout measures that checkout's bot).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TREE), env.get("PYTHONPATH")]))
    env.update(stores or {})
    env.update(
        {
            "ELORA_HOME": str(home),
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "ELORA_TELEGRAM_ALLOWED_USERS": ",".join(str(u) for u in users),
            "ELORA_TELEGRAM_BASE_URL": telegram.base_url,
            "ELORA_LLM_API_BASE": llm.base_url,
            "ELORA_LLM_API_KEY": "bench-key",
            "ELORA_LLM_RETRIES": "0",
            "ELORA_LEARNING_EXTRACTOR": args.extractor,
            "ELORA_LOG_LEVEL": "WARNING",
        }
    )
    if args.chats:
        env["ELORA_TELEGRAM_CONCURRENT_CHATS"] = str(args.chats)
    if args.slots:
        env["ELORA_WORK_SLOTS"] = str(args.slots)
    for tier in ("LITE", "FLASH", "PRO"):
        env[f"ELORA_MODEL_{tier}"] = f"openai/bench-{tier.lower()}"
    return env


def start_bots(env: dict[str, str], home: Path, count: int = 1) -> list[subprocess.Popen]:
    """`count` bot processes on one home, each logging to home/bot-N.log."""
    processes = []
    command = [sys.executable, "-m", "core.cli.main", "bot"]
    for n in range(count):
        with open(home / f"bot-{n}.log", "wb") as log:  # the child keeps its own descriptor
            processes.append(
                subprocess.Popen(command, env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT)
            )
    return processes


def cpu_seconds(processes: list[subprocess.Popen]) -> float:
    """User + system CPU time the processes used so far (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for p in processes:
        try:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def stop_bots(processes: list[subprocess.Popen]) -> list[int]:
    """SIGTERM every bot and wait for it; return the exit codes."""
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    codes = []
    for p in processes:
        try:
            codes.append(p.wait(timeout=120))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
    return codes


class Replies:
    """Records when each tagged reply reached the fake Bot API."""

    def __init__(self) -> None:
        self.at: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def hook(self, params: dict[str, Any]) -> None:
        tag = TAG.search(str(params.get("text", "")))
        if tag:
            with self.lock:
                self.at.setdefault(tag.group(1), []).append(time.perf_counter())

    def count(self) -> int:
        with self.lock:
            return len(self.at)


def seed_history(home: Path, messages: int, stores: dict[str, str]) -> None:
    """An archive of `messages` synthetic messages with random stored vectors."""
    from datetime import datetime

    from tests.bench import synthetic
    from tests.fakes import FixedClock

    saved = {k: os.environ.get(k) for k in stores}
    os.environ.update(stores)
    try:
        services = synthetic.open_bench_services(
            home, synthetic.local_embedder(), FixedClock(datetime.now()),
            stores.get("ELORA_DATABASE_URL"),
        )  # fmt: skip
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        synthetic.build_archive(services, messages, True, datetime.now())
    finally:
        services.close()


def check_home(
    home: Path, sent: dict[str, str], replied: dict[str, list[float]], warm_chat: int,
    database_url: str | None = None, reply_chars: int = 0,
) -> dict:  # fmt: skip
    """Archive exactness, spool backlog and pipeline overhead, read from the stopped bot's home
    (its SQLite file, or the PostgreSQL database it shared)."""
    from core.storage.db import Database

    db = Database(database_url or f"sqlite:///{home / 'elora.db'}")
    try:
        users = Counter(t for (t,) in db.rows("SELECT text FROM captures WHERE role = 'user'"))
        answers = Counter(
            t for (t,) in db.rows("SELECT text FROM captures WHERE role = 'assistant'")
        )
        traces = db.rows(
            "SELECT latency_ms, models, error FROM traces WHERE chat_id != ?", (str(warm_chat),)
        )
    finally:
        db.close()
    missing_user = [tag for tag, text in sent.items() if users[text] != 1]
    missing_reply = [tag for tag in sent if answers[answer_to(tag, reply_chars)] != 1]
    overhead = []
    for latency, models, _ in traces:
        model_ms = sum(call.get("latency_ms", 0) for call in json.loads(models or "[]"))
        overhead.append(latency - model_ms)
    spool = home / "spool"
    spooled = sum(
        1 for f in spool.glob("spool-*.jsonl") for line in f.read_text().splitlines() if line
    ) if spool.exists() else 0  # fmt: skip
    locked = sum(
        log.read_text(errors="replace").count("database is locked")
        for log in home.glob("bot-*.log")
    )
    return {
        "user_captures_not_once": missing_user,
        "replies_not_archived_once": missing_reply,
        "replies_sent_not_once": [t for t in sent if len(replied.get(t, [])) != 1],
        "traces": len(traces),
        "trace_errors": Counter(e for _, _, e in traces if e),
        "overhead": overhead,
        "spooled": spooled,
        "locked_in_log": locked,
    }


def run(args, stores: dict[str, str] | None = None) -> tuple[int, dict]:
    """Start the fakes and the bot(s), send the burst, wait, stop, check; (0 when on target,
    the figures)."""
    stores = stores or {}
    llm = FakeLLMServer().start()
    llm.responder = lambda body: responder(body, args.reply_chars)
    telegram = FakeTelegram(TOKEN).start()
    replies = Replies()
    telegram.on("sendMessage", replies.hook)
    users = [FIRST_USER + n for n in range(args.users)]
    warm_user = FIRST_USER + args.users
    with bench_home(keep=args.keep) as home:
        if args.history:
            seed_history(home, args.history, stores)
        processes = start_bots(
            bot_env(home, telegram, llm, [*users, warm_user], args, stores), home, args.workers
        )
        try:
            started = time.perf_counter()
            telegram.push(update(warm_user, 1, "bonjour (#u0m0)"))
            if not telegram.wait_for(lambda: replies.count() >= 1, STARTUP):
                print((home / "bot-0.log").read_text(errors="replace")[-3000:])
                raise SystemExit("the bot never answered the warm-up message")
            print(f"bot ready and warm in {time.perf_counter() - started:.1f} s "
                  f"(cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")  # fmt: skip
            sent: dict[str, str] = {}
            burst = []
            for m in range(args.messages):
                for n, user in enumerate(users):
                    tag = f"u{n + 1}m{m + 1}"
                    text = f"{TEXTS[(n + m) % len(TEXTS)]} (#{tag})"
                    sent[tag] = text
                    burst.append(update(user, 100 + m, text))
            cpu0 = cpu_seconds(processes)
            fakes0 = time.process_time()
            t0 = time.perf_counter()
            for u in burst:
                telegram.push(u)
            total = len(burst)
            done = telegram.wait_for(lambda: replies.count() >= total + 1, args.timeout)
            elapsed = time.perf_counter() - t0
            cpu = cpu_seconds(processes) - cpu0
            fakes = time.process_time() - fakes0
            if not done:
                print(f"timed out: {replies.count() - 1} of {total} replies")
        finally:
            codes = stop_bots(processes)
        with replies.lock:
            replied = {k: v for k, v in replies.at.items() if k != "u0m0"}
        latencies = [v[0] - t0 for v in replied.values()]
        last = max(latencies) if latencies else elapsed
        checks = check_home(
            home, sent, replied, warm_user, stores.get("ELORA_DATABASE_URL"), args.reply_chars
        )
        checks["cpu"] = cpu
        checks["fakes_cpu"] = fakes
    llm.stop()
    telegram.stop()
    return report(args, total, latencies, last, checks, codes)


def report(args, total, latencies, last, checks, codes) -> tuple[int, dict]:
    """Print the figures and checks; (0 when every target and check holds, the figures)."""
    rate = len(latencies) / last if last else 0.0
    overhead = checks["overhead"]
    print(f"\n{args.users} users x {args.messages} messages = {total} at once "
          f"({args.workers} bot process(es), extractor {args.extractor}, history {args.history})")  # fmt: skip
    print(f"  answered      {len(latencies)}/{total} in {last:.1f} s: {rate:.1f} messages/s")
    print(
        f"  bot CPU       {checks['cpu']:.1f} s over the burst: "
        f"{1000 * checks['cpu'] / max(total, 1):.0f} ms per message"
    )
    print(
        f"  fakes CPU     {checks['fakes_cpu']:.1f} s (the Bot API and model servers, this "
        f"process): {1000 * checks['fakes_cpu'] / max(total, 1):.0f} ms per message"
    )
    if latencies:
        print(f"  reply latency p50 {percentile(latencies, 50):6.2f} s  "
              f"p95 {percentile(latencies, 95):6.2f} s  max {max(latencies):6.2f} s")  # fmt: skip
    if overhead:
        print(f"  pipeline overhead p50 {percentile(overhead, 50):6.0f} ms  "
              f"p95 {percentile(overhead, 95):6.0f} ms  max {max(overhead):6.0f} ms "
              f"({len(overhead)} traces)")  # fmt: skip
    problems = []
    for key in ("user_captures_not_once", "replies_not_archived_once", "replies_sent_not_once"):
        if checks[key]:
            problems.append(f"{key}: {len(checks[key])} ({', '.join(checks[key][:5])}…)")
    if checks["spooled"]:
        problems.append(f"spooled captures: {checks['spooled']}")
    if checks["locked_in_log"]:
        problems.append(f"'database is locked' in the log: {checks['locked_in_log']}")
    if checks["trace_errors"]:
        problems.append(f"traces with errors: {dict(checks['trace_errors'])}")
    if any(codes):
        problems.append(f"bot exit codes {codes}")
    print("  archive: " + ("exact, nothing spooled" if not problems else "; ".join(problems)))
    misses = []
    if rate < TARGETS["rate"]:
        misses.append(f"rate {rate:.1f} < {TARGETS['rate']}")
    if latencies and percentile(latencies, 95) > TARGETS["reply_p95"]:
        misses.append(f"reply p95 > {TARGETS['reply_p95']} s")
    if overhead and percentile(overhead, 95) > TARGETS["overhead_p95"]:
        misses.append(f"overhead p95 > {TARGETS['overhead_p95']} ms")
    print("  targets: " + ("met" if not misses else "MISSED (" + "; ".join(misses) + ")"))
    figures = {
        "answered": f"{len(latencies)}/{total}",
        "rate": rate,
        "p50": percentile(latencies, 50) if latencies else float("nan"),
        "p95": percentile(latencies, 95) if latencies else float("nan"),
        "overhead_p95": percentile(overhead, 95) if overhead else float("nan"),
        "cpu_ms": 1000 * checks["cpu"] / max(total, 1),
        "archive": "exact, nothing spooled" if not problems else "; ".join(problems),
    }
    return (1 if problems or misses else 0), figures


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--messages", type=int, default=30, help="messages per user")
    parser.add_argument("--workers", type=int, default=1, help="bot processes on the home")
    parser.add_argument("--history", type=int, default=0, help="archived messages seeded first")
    parser.add_argument("--chats", type=int, help="chats answered at once (the bot's setting)")
    parser.add_argument("--slots", type=int, help="requests doing local work at once (setting)")
    parser.add_argument(
        "--extractor", default="auto", choices=["auto", "heuristic", "off"],
        help="learning after each exchange (auto: one more LITE call per message)",
    )  # fmt: skip
    parser.add_argument(
        "--reply-chars", type=int, default=0,
        help="answers about this long (default: a short sentence naming the message)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for replies")
    parser.add_argument("--keep", action="store_true", help="keep the tmp home")
    parser.add_argument(
        "--configs", default="",
        help="set-ups run one after the other, e.g. sqlite:1,postgres:1,postgres:2",
    )  # fmt: skip
    parser.add_argument(
        "--database-url", default=None,
        help="PostgreSQL for postgres:N set-ups: a server URL, or 'auto' (a throwaway cluster)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.configs:
        return run(args)[0]
    return compare(args)


def compare(args) -> int:
    """Run each set-up of --configs in turn; print them side by side."""
    from tests.bench.synthetic import bench_databases

    setups = []
    for item in args.configs.split(","):
        backend, _, workers = item.strip().partition(":")
        if backend not in ("sqlite", "postgres"):
            raise SystemExit(f"unknown set-up {item!r}: sqlite:N or postgres:N")
        setups.append((backend, int(workers or 1)))
    results = []
    worst = 0
    needs_servers = any(backend == "postgres" for backend, _ in setups)
    with (
        chroma_server(needs_servers) as chroma,
        bench_databases((args.database_url or "auto") if needs_servers else None) as databases,
    ):
        for n, (backend, workers) in enumerate(setups):
            args.workers = workers
            with databases() as url:
                stores = {}
                if backend == "postgres":
                    stores = {"ELORA_DATABASE_URL": url, "ELORA_CHROMA_URL": chroma,
                              "ELORA_CHROMA_PREFIX": f"load{n}-"}  # fmt: skip
                print(f"\n=== {backend}, {workers} worker(s)")
                code, figures = run(args, stores)
            worst = max(worst, code)
            results.append((f"{backend} + {workers} worker(s)", figures))
    print(f"\nside by side ({args.users} users x {args.messages} messages, load "
          f"{os.getloadavg()[0]:.1f}):")  # fmt: skip
    print(f"  {'set-up':<24} {'answered':>9} {'msg/s':>6} {'p50 s':>6} {'p95 s':>6} "
          f"{'ovh p95 ms':>10} {'CPU ms/msg':>10}  archive")  # fmt: skip
    for label, f in results:
        print(f"  {label:<24} {f['answered']:>9} {f['rate']:6.1f} {f['p50']:6.2f} "
              f"{f['p95']:6.2f} {f['overhead_p95']:10.0f} {f['cpu_ms']:10.0f}  {f['archive']}")  # fmt: skip
    return worst


@contextmanager
def chroma_server(needed: bool) -> Iterator[str | None]:
    """A `chroma run` server on a free loopback port while the bench runs (when needed)."""
    if not needed:
        yield None
        return
    import socket
    import tempfile
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = Path(tempfile.mkdtemp(prefix="elora-bench-chroma-"))
    url = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).with_name("chroma")), "run", "--path", str(path / "data"),
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with open(path / "server.log", "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the chroma server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
