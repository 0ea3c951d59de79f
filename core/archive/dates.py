"""Dates a message mentions ("yesterday", "next Friday", "la semaine prochaine", "le 18 mai"),
resolved against the moment the message was sent.

Resolved at index time, so "when did X happen?" finds "I did X yesterday" with the day it
happened, and a question about a period finds messages that speak of it from outside it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from core.recall.timeparse import MONTHS

WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4,
    "samedi": 5, "dimanche": 6,
}  # fmt: skip
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3, "un": 1, "une": 1,
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9,
    "dix": 10, "quelques": 3,
}  # fmt: skip
_UNITS = {
    "day": "day", "days": "day", "jour": "day", "jours": "day", "week": "week",
    "weeks": "week", "semaine": "week", "semaines": "week", "month": "month",
    "months": "month", "mois": "month", "year": "year", "years": "year", "an": "year",
    "ans": "year", "annee": "year", "annees": "year",
}  # fmt: skip
_DAY = "day"
_NUM = (
    r"(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few|un|une|"
    r"deux|trois|quatre|cinq|sept|huit|neuf|dix|quelques)"
)
_UNIT = r"(days?|jours?|weeks?|semaines?|months?|mois|years?|ans?|annees?)"
_WD = "|".join(WEEKDAYS)
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))


@dataclass(frozen=True)
class DateMention:
    """A period a message refers to: [start, end) in days, and how precise it is."""

    phrase: str
    start: date
    end: date
    granularity: str  # day | span (a few days) | week | month | year

    @property
    def label(self) -> str:
        """The period as people write it: 2025-05-18, week of 2025-05-12, 2025-05, 2025."""
        if self.granularity == "day":
            return self.start.isoformat()
        if self.granularity == "week":
            return f"week of {self.start.isoformat()}"
        if self.granularity == "span":
            return f"{self.start.isoformat()} to {(self.end - timedelta(days=1)).isoformat()}"
        if self.granularity == "month":
            return self.start.strftime("%Y-%m")
        return str(self.start.year)

    def to_json(self) -> dict[str, str]:
        """The mention as plain data for the pack."""
        return {
            "phrase": self.phrase,
            "date": self.label,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
        }


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower()).replace("’", "'")
    return "".join(c for c in text if not unicodedata.combining(c))


def _amount(word: str) -> int:
    word = word.replace(" of", "").strip()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _week(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=7)


def _month(year: int, month: int) -> tuple[date, date]:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    nxt = (year + 1, 1) if month == 12 else (year, month + 1)
    return date(year, month, 1), date(*nxt, 1)


def _span(unit: str, moment: date) -> tuple[date, date, str]:
    """The unit-sized period holding `moment` (a day, its week, its month, its year)."""
    if unit == "day":
        return moment, moment + timedelta(days=1), "day"
    if unit == "week":
        return (*_week(moment), "week")
    if unit == "month":
        return (*_month(moment.year, moment.month), "month")
    return date(moment.year, 1, 1), date(moment.year + 1, 1, 1), "year"


def _shift(unit: str, today: date, n: int) -> date:
    if unit == "day":
        return today + timedelta(days=n)
    if unit == "week":
        return today + timedelta(days=7 * n)
    if unit == "month":
        start, _ = _month(today.year, today.month + n)
        return start.replace(day=min(today.day, 28))
    return date(today.year + n, 1, 1)


def _nearest_year(day: int, month: int, sent: date) -> date | None:
    """A day-month without a year: the occurrence nearest to when the message was sent."""
    options = []
    for year in (sent.year - 1, sent.year, sent.year + 1):
        try:
            options.append(date(year, month, day))
        except ValueError:
            continue
    return min(options, key=lambda d: abs((d - sent).days)) if options else None


# (pattern, unit, offset): the period `offset` units away from the message's day.
_FIXED = (
    (r"\b(the day before yesterday|avant[- ]hier)\b", "day", -2),
    (r"\b(the day after tomorrow|apres[- ]demain)\b", "day", 2),
    (r"\b(yesterday|hier(?: soir| matin)?|last night)\b", "day", -1),
    (r"\b(today|tonight|this morning|this evening|aujourd'hui|ce matin|ce soir)\b", "day", 0),
    (r"\b(tomorrow|demain)\b", "day", 1),
    (r"\b(last week|the week before|la semaine (?:derniere|passee))\b", "week", -1),
    (r"\b(this week|cette semaine)\b", "week", 0),
    (r"\b(next week|la semaine (?:prochaine|d'apres))\b", "week", 1),
    (r"\b(last month|le mois (?:dernier|passe))\b", "month", -1),
    (r"\b(this month|ce mois-?ci)\b", "month", 0),
    (r"\b(next month|le mois prochain)\b", "month", 1),
    (r"\b(last year|l'an(?:nee)? (?:dernier|derniere|passe|passee))\b", "year", -1),
    (r"\b(next year|l'an(?:nee)? prochaine?)\b", "year", 1),
)


def resolve_dates(text: str, sent_at: datetime) -> list[DateMention]:
    """Every period the text names, resolved against when it was sent (at most one per phrase)."""
    q = _fold(text)
    today = sent_at.date()
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match, start: date, end: date, granularity: str) -> None:
        span = m.span()
        if any(a < span[1] and span[0] < b for a, b in taken):
            return
        taken.append(span)
        found.append(DateMention(text_slice(text, m), start, end, granularity))

    past = (  # "last Friday", "vendredi dernier", "le week-end passé": the unit is group 2
        rf"\b(last|past|this past|previous) (weekend|{_WD})\b",
        rf"\b(le |ce )?(week-?end|{_WD}) (dernier|passe)\b",
    )
    for m in (m for pattern in past for m in re.finditer(pattern, q)):
        if m.group(2).startswith("week"):
            sat = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
            add(m, sat, sat + timedelta(days=2), "span")
        else:
            back = (today.weekday() - WEEKDAYS[m.group(2)]) % 7 or 7
            day = today - timedelta(days=back)
            add(m, day, day + timedelta(days=1), _DAY)
    for m in re.finditer(rf"\b(next|this|this coming|coming) (weekend|{_WD})\b", q):
        target = 5 if m.group(2) == "weekend" else WEEKDAYS[m.group(2)]
        ahead = (target - today.weekday()) % 7
        if m.group(1) == "next" and ahead == 0:
            ahead = 7
        day = today + timedelta(days=ahead)
        span = 2 if m.group(2) == "weekend" else 1
        add(m, day, day + timedelta(days=span), "span" if span == 2 else _DAY)
    for m in re.finditer(
        rf"\b(?:le |ce )?(week-?end|{_WD}) prochain\b|\bce (week-?end|{_WD})\b", q
    ):
        word = m.group(1) or m.group(2)
        target = 5 if word.startswith("week") else WEEKDAYS[word]
        ahead = (target - today.weekday()) % 7
        if "prochain" in m.group(0) and ahead == 0:
            ahead = 7
        day = today + timedelta(days=ahead)
        span = 2 if word.startswith("week") else 1
        add(m, day, day + timedelta(days=span), "span" if span == 2 else _DAY)

    for m in re.finditer(rf"\b{_NUM} {_UNIT} ago\b|\bil y a {_NUM} {_UNIT}\b", q):
        n = _amount(m.group(1) or m.group(3))
        unit = _UNITS[m.group(2) or m.group(4)]
        add(m, *_span(unit, _shift(unit, today, -n)))
    for m in re.finditer(rf"\b(?:in|dans) {_NUM} {_UNIT}\b", q):
        n = _amount(m.group(1))
        unit = _UNITS[m.group(2)]
        add(m, *_span(unit, _shift(unit, today, n)))

    for pattern, unit, offset in _FIXED:
        for m in re.finditer(pattern, q):
            add(m, *_span(unit, _shift(unit, today, offset)))

    for m in re.finditer(
        rf"\b(\d{{1,2}})(?:er|st|nd|rd|th)?(?: of)? ({_MONTH})\.?(?: (\d{{4}}))?\b"
        rf"|\b({_MONTH})\.? (\d{{1,2}})(st|nd|rd|th)?\b(?:,? (\d{{4}}))?",
        q,
    ):
        day_s, month_s, year_s = (
            (m.group(1), m.group(2), m.group(3))
            if m.group(1)
            else (m.group(5), m.group(4), m.group(7))
        )
        day_n, month_n = int(day_s), MONTHS[month_s]
        cued = re.search(
            r"\b(on|by|until|till|before|after|since|from|le|au|du)\s*$", q[: m.start()]
        )
        if month_s in ("may", "mar") and not (year_s or m.group(1) or m.group(6) or cued):
            continue  # "may 3 people come" is not a date; "May 3rd", "3 May", "on May 3" are
        if year_s:
            try:
                when = date(int(year_s), month_n, day_n)
            except ValueError:
                continue
        else:
            when = _nearest_year(day_n, month_n, today)
        if when is not None:
            add(m, when, when + timedelta(days=1), _DAY)
    return found


def text_slice(text: str, m: re.Match) -> str:
    """The phrase as written (folding keeps lengths for the accents used in FR/EN text)."""
    start, end = m.span()
    piece = text[start:end]
    return piece if _fold(piece) == m.group(0) else m.group(0)


def date_key(mentions: list[DateMention]) -> str:
    """The resolved dates as words a search can match: ISO day, month name and year."""
    words = []
    for mention in mentions:
        words.append(mention.label)
        if mention.granularity in ("day", "span", "week"):
            words.append(mention.start.strftime("%d %B %Y").lstrip("0"))
    return " ".join(dict.fromkeys(words))
