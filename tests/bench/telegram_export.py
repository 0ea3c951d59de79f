"""A synthetic Telegram Desktop export for the import benchmark: deterministic for a seed.

Short FR/EN small talk (from tests.bench.synthetic) in bursts across personal chats and groups,
with what real exports also hold: long messages (notes, forwarded articles), formatted text as
entity lists, replies, photos with captions, files, stickers and service records.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from tests.bench.synthetic import EN_FRIENDS, FR_FRIENDS, chatter

OPERATOR = ("Camille Martin", "user5012345678")
# One message in a hundred is long (a note, a forwarded article); the rest is small talk.
LONG_SHARE = 0.01
SURNAMES = ["Martin", "Moreau", "Petit", "Roux", "Fabre", "Haddad", "Smith", "Patel", "Okafor"]
FR_SENTENCES = [
    "Je t'envoie le compte rendu de la réunion de ce matin avec les points importants.",
    "Le budget du projet a été revu à la hausse après la dernière réunion avec le client.",
    "Il faudra penser à réserver les billets de train avant la fin du mois, les prix montent vite.",
    "Le propriétaire a enfin répondu pour la fuite, un plombier passe jeudi entre 8h et 12h.",
    "J'ai relu le contrat : la clause de résiliation prévoit un préavis de trois mois.",
    "Pour les vacances, on hésite encore entre la Bretagne et les Pyrénées.",
    "Le médecin m'a conseillé de reprendre le sport doucement, deux fois par semaine.",
    "On a décidé de repousser la mise en production d'une semaine pour finir les tests.",
]
EN_SENTENCES = [
    "Here are my notes from this morning's meeting, with the action items at the end.",
    "The client approved the new scope, but the deadline stays the same for now.",
    "We should book the venue before the end of the month, prices go up in summer.",
    "I read the article you sent: the main point is that small teams ship faster.",
    "The landlord finally answered about the heating, someone comes on Thursday morning.",
    "For the trip, we still have to choose between Lisbon and Edinburgh.",
    "My doctor said I should get back to running slowly, twice a week at most.",
    "We decided to postpone the release by a week to finish the load tests.",
]


def long_text(rng: random.Random, lang: str) -> str:
    """A note or forwarded article: 2 to 10 paragraphs, roughly 200 to 2,500 characters."""
    pool = FR_SENTENCES if lang == "fr" else EN_SENTENCES
    paragraphs = [
        " ".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
        for _ in range(rng.randint(2, 10))
    ]
    return "\n\n".join(paragraphs)


def decorate(rng: random.Random, text: str) -> str | list:
    """Now and then, text as Telegram writes formatted messages: a list of strings and entities."""
    if rng.random() > 0.05 or " " not in text:
        return text
    head, tail = text.split(" ", 1)
    kind = rng.choice(["bold", "italic", "link"])
    if kind == "link":
        return [head + " ", {"type": "link", "text": "https://example.org/x"}, " " + tail]
    return [{"type": kind, "text": head}, " " + tail]


def _people(rng: random.Random, lang: str, size: int) -> list[tuple[str, str]]:
    pool = FR_FRIENDS if lang == "fr" else EN_FRIENDS
    names = rng.sample(pool, size)
    return [
        (f"{n} {rng.choice(SURNAMES)}", f"user{5100000000 + sum(map(ord, n)) * 7}") for n in names
    ]


def _message(rng, mid, at, who, lang, replyable) -> dict:
    record = {
        "id": mid,
        "type": "message",
        "date": at.isoformat(timespec="seconds"),
        "date_unixtime": str(int(at.replace(tzinfo=UTC).timestamp())),
        "from": who[0],
        "from_id": who[1],
    }
    roll = rng.random()
    text: str | list = chatter(rng, lang)
    if roll < LONG_SHARE:
        text = long_text(rng, lang)
    elif roll < 0.025:
        record.update(
            {
                "photo": f"photos/photo_{mid}@{at:%d-%m-%Y_%H-%M-%S}.jpg",
                "width": 1280,
                "height": 960,
            }
        )
    elif roll < 0.03:
        record.update({"file": f"files/document_{mid}.pdf", "mime_type": "application/pdf"})
    elif roll < 0.04:
        record.update(
            {"file": "stickers/sticker.webp", "media_type": "sticker", "sticker_emoji": "👍"}
        )
        text = ""
    if replyable and rng.random() < 0.08:
        record["reply_to_message_id"] = rng.choice(replyable)
    record["text"] = decorate(rng, text) if text else ""
    return record


def chat(rng: random.Random, index: int, count: int, start: datetime, days: int) -> dict:
    """One chat of `count` records in bursts over `days` days, in time order."""
    lang = "fr" if index % 3 else "en"
    group = index % 4 == 0
    people = _people(rng, lang, rng.randint(2, 4) if group else 1)
    messages: list[dict] = []
    at = start
    step = timedelta(days=days) / max(count, 1)
    while len(messages) < count:
        at += step * rng.uniform(0, 2 * rng.randint(1, 8))
        for _ in range(min(rng.randint(2, 12), count - len(messages))):
            mid = len(messages) + 1
            if group and rng.random() < 0.004:
                messages.append(
                    {
                        "id": mid,
                        "type": "service",
                        "date": at.isoformat(timespec="seconds"),
                        "actor": people[0][0],
                        "action": "pin_message",
                        "message_id": max(1, mid - 1),
                        "text": "",
                    }
                )
            else:
                who = OPERATOR if rng.random() < 0.45 else rng.choice(people)
                recent = [m["id"] for m in messages[-20:]]
                messages.append(_message(rng, mid, at, who, lang, recent))
            at += timedelta(seconds=rng.randint(15, 300))
    kind = "private_group" if group else "personal_chat"
    name = (
        f"Groupe {index}"
        if group and lang == "fr"
        else (f"Group {index}" if group else people[0][0])
    )
    return {"name": name, "type": kind, "id": 4_000_000_000 + index, "messages": messages}


def telegram_export(messages: int, chats: int = 24, seed: int = 50_000) -> dict:
    """A full-account export of `messages` records spread unevenly over `chats` chats."""
    rng = random.Random(seed)
    weights = [rng.paretovariate(1.2) for _ in range(chats)]
    shares = [int(messages * w / sum(weights)) for w in weights]
    shares[0] += messages - sum(shares)
    start = datetime(2021, 1, 1)
    return {
        "about": "synthetic benchmark export",
        "chats": {
            "about": "This page lists all chats from this export.",
            "list": [chat(rng, i, n, start, 1200) for i, n in enumerate(shares) if n > 0],
        },
    }
