from datetime import datetime

import pytest

from core.recall.timeparse import anchored, parse_period
from tests.core.memory.helpers import NOW


def day(month: int, d: int, year: int = 2024) -> datetime:
    return datetime(year, month, d)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("Qu'est-ce que j'ai mangé hier ?", day(6, 14), day(6, 15)),
        ("What did I eat yesterday?", day(6, 14), day(6, 15)),
        ("Et avant-hier ?", day(6, 13), day(6, 14)),
        ("Qu'est-ce que j'ai noté ce matin ?", day(6, 15), day(6, 16)),
        ("What did we discuss last week?", day(6, 3), day(6, 10)),
        ("De quoi on a parlé la semaine dernière ?", day(6, 3), day(6, 10)),
        ("Qu'est-ce que j'ai dit en mai ?", day(5, 1), day(6, 1)),
        ("What happened in May?", day(5, 1), day(6, 1)),
        ("Where was I in May 2023?", day(5, 1, 2023), day(6, 1, 2023)),
        ("Qu'ai-je fait en décembre ?", day(12, 1, 2023), day(1, 1)),  # the last December
        ("What did we decide in 2023?", day(1, 1, 2023), day(1, 1)),
        ("Qu'est-ce qu'on a décidé en 2023 ?", day(1, 1, 2023), day(1, 1)),
        ("le mois dernier", day(5, 1), day(6, 1)),
        ("last year", day(1, 1, 2023), day(1, 1)),
        ("il y a deux semaines", day(5, 29), day(6, 5)),
        ("two weeks ago", day(5, 29), day(6, 5)),
        ("the last 3 days", day(6, 12), day(6, 16)),
    ],
)
def test_named_periods_become_date_windows_in_french_and_english(question, start, end):
    window = parse_period(question, NOW)

    assert window is not None
    assert (window.start, window.end) == (start, end)
    assert window.contains(start) and not window.contains(end)


@pytest.mark.parametrize(
    ("question", "relation", "anchor"),
    [
        ("Combien était le loyer avant le déménagement ?", "before", "demenagement"),
        ("How much was the rent before the move?", "before", "move"),
        ("Qu'est-ce qui a changé après mon mariage ?", "after", "mariage"),
    ],
)
def test_periods_relative_to_an_event_keep_the_event_to_date_later(question, relation, anchor):
    window = parse_period(question, NOW)

    assert (window.relation, window.anchor) == (relation, anchor)
    assert window.start is None and window.end is None
    moved = datetime(2024, 5, 3)
    resolved = anchored(window, moved)
    assert resolved.contains(datetime(2024, 4, 2)) == (relation == "before")
    assert resolved.contains(datetime(2024, 5, 20)) == (relation == "after")


@pytest.mark.parametrize(
    "question",
    [
        "Write a haiku about autumn",
        "I may come by later",
        "What's the plan for next week?",
        "Quel est mon code de casier ?",
    ],
)
def test_questions_without_a_period_have_no_window(question):
    assert parse_period(question, NOW) is None


@pytest.mark.parametrize(
    ("question", "start"),
    [("Qu'est-ce qui a changé depuis mars ?", day(3, 1)), ("since 2020", day(1, 1, 2020))],
)
def test_since_a_month_or_year_runs_until_now(question, start):
    window = parse_period(question, NOW)

    assert window.start == start
    assert window.contains(day(6, 1))  # well after the named month/year
