"""Periods named in a question, in French and English: "last week", "en mai", "hier", "in 2023".

Returns a window [start, end) in naive UTC. Relative anchors ("before the move") are returned
with the event phrase so the caller can date the event from memory.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10,
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "dix": 10,
}  # fmt: skip
_UNIT = {
    "day": 1, "days": 1, "jour": 1, "jours": 1, "week": 7, "weeks": 7, "semaine": 7,
    "semaines": 7, "month": 30, "months": 30, "mois": 30, "year": 365, "years": 365, "an": 365,
    "ans": 365, "annee": 365, "annees": 365,
}  # fmt: skip


@dataclass(frozen=True)
class TimeWindow:
    """A period a question refers to; `anchor` is set for "before/after <event>"."""

    label: str
    start: datetime | None
    end: datetime | None
    anchor: str | None = None
    relation: str | None = None  # before | after, with anchor

    def contains(self, moment: datetime) -> bool:
        """Whether a moment falls inside the window."""
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment < self.end
        )

    def to_json(self) -> dict:
        """The window as plain data."""
        return {
            "label": self.label,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "anchor": self.anchor,
            "relation": self.relation,
        }


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c)).replace("’", "'")


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1)
    end = datetime(year + (month == 12), month % 12 + 1, 1)
    return start, end


def _week_start(moment: datetime) -> datetime:
    return _day(moment) - timedelta(days=moment.weekday())


def parse_period(question: str, now: datetime) -> TimeWindow | None:
    """The first period the question names, or None."""
    q = _fold(question)
    today = _day(now)

    simple = (
        (r"\b(avant[- ]hier|day before yesterday)\b", 2, 1),
        (r"\b(hier|yesterday)\b", 1, 0),
        (r"\b(aujourd'hui|today|ce matin|this morning|tonight|ce soir)\b", 0, -1),
    )
    for pattern, back, forward in simple:
        m = re.search(pattern, q)
        if m:
            return TimeWindow(
                m.group(1), today - timedelta(days=back), today - timedelta(days=forward)
            )

    m = re.search(r"\b(last week|la semaine (?:derniere|passee))\b", q)
    if m:
        start = _week_start(now) - timedelta(days=7)
        return TimeWindow(m.group(1), start, start + timedelta(days=7))
    m = re.search(r"\b(this week|cette semaine)\b", q)
    if m:
        start = _week_start(now)
        return TimeWindow(m.group(1), start, start + timedelta(days=7))
    m = re.search(r"\b(last month|le mois (?:dernier|passe))\b", q)
    if m:
        year, month = (now.year, now.month - 1) if now.month > 1 else (now.year - 1, 12)
        return TimeWindow(m.group(1), *_month(year, month))
    m = re.search(r"\b(this month|ce mois-?ci)\b", q)
    if m:
        return TimeWindow(m.group(1), *_month(now.year, now.month))
    m = re.search(r"\b(last year|l'an(?:nee)? (?:dernier|derniere|passe|passee))\b", q)
    if m:
        return TimeWindow(m.group(1), datetime(now.year - 1, 1, 1), datetime(now.year, 1, 1))
    m = re.search(r"\b(this year|cette annee)\b", q)
    if m:
        return TimeWindow(m.group(1), datetime(now.year, 1, 1), datetime(now.year + 1, 1, 1))

    number = r"(\d+|" + "|".join(_NUMBERS) + r")"
    unit = r"(" + "|".join(sorted(_UNIT, key=len, reverse=True)) + r")"
    m = re.search(rf"\bil y a {number} {unit}\b", q) or re.search(rf"\b{number} {unit} ago\b", q)
    if m:
        days = _amount(m.group(1)) * _UNIT[m.group(2)]
        center = today - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))
        return TimeWindow(m.group(0), center - slack, center + slack + timedelta(days=1))
    m = re.search(rf"\b(?:the )?(?:last|past) {number} {unit}\b", q) or re.search(
        rf"\b(?:les|ces) {number} (?:derniers|dernieres) {unit}\b", q
    )
    if m:
        days = _amount(m.group(1)) * _UNIT[m.group(2)]
        return TimeWindow(m.group(0), today - timedelta(days=days), today + timedelta(days=1))

    m = re.search(
        rf"\b(?:in|en|au mois de|during|pendant|depuis|since)?\s*({_MONTH_RE})\.?(?:,?\s+((?:19|20)\d\d))?\b",
        q,
    )
    if m and _is_month_word(q, m):
        month = MONTHS[m.group(1)]
        year = int(m.group(2)) if m.group(2) else (now.year if month <= now.month else now.year - 1)
        start, end = _month(year, month)
        return TimeWindow(m.group(0).strip(), start, None if _since(m) else end)
    m = re.search(r"\b(?:in|en|during|pendant|since|depuis)?\s*((?:19|20)\d\d)\b", q)
    if m:
        year = int(m.group(1))
        end = None if _since(m) else datetime(year + 1, 1, 1)
        return TimeWindow(m.group(0).strip(), datetime(year, 1, 1), end)

    m = re.search(
        r"\b(before|after|avant|apres|since|depuis)\s+(?:the|my|our|le|la|l'|les|mon|ma|notre)\s*([\w' -]{3,40})",
        q,
    )
    if m:
        relation = "before" if m.group(1) in ("before", "avant") else "after"
        anchor = re.split(r"[?.!,;]", m.group(2))[0].strip()
        return TimeWindow(m.group(0).strip(), None, None, anchor=anchor, relation=relation)
    return None


def _since(m: re.Match) -> bool:
    """Whether the period was opened by since/depuis: it then runs until now."""
    return m.group(0).split()[0] in ("since", "depuis")


def _amount(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _is_month_word(q: str, m: re.Match) -> bool:
    """Avoid reading "may" (modal) or "mars" (planet) as months without a cue."""
    word = m.group(1)
    cue = m.group(0).strip() != word or m.group(2)
    if word in ("may", "mar", "jan", "sep", "oct", "nov", "dec", "feb", "apr", "jun", "jul", "aug"):
        return bool(cue)
    return True


def anchored(window: TimeWindow, event_time: datetime) -> TimeWindow:
    """Resolve "before/after <event>" once the event is dated."""
    if window.relation == "before":
        return TimeWindow(window.label, None, event_time, window.anchor, window.relation)
    return TimeWindow(window.label, event_time, None, window.anchor, window.relation)
