"""Relative dates in messages are resolved against when the message was sent, at index time."""

from datetime import date, datetime, timedelta

import pytest

from core.archive.dates import resolve_dates
from core.recall.pack import build_pack
from tests.core.memory.helpers import message

MONDAY = datetime(2023, 5, 8, 13, 56)  # a Monday


@pytest.mark.parametrize(
    ("text", "phrase", "start", "end"),
    [
        ("I went to a support group yesterday", "yesterday", date(2023, 5, 7), date(2023, 5, 8)),
        ("On s'est vus hier soir", "hier soir", date(2023, 5, 7), date(2023, 5, 8)),
        ("il y a deux jours j'ai vu Léa", "il y a deux jours", date(2023, 5, 6), date(2023, 5, 7)),
        ("we ran a charity race last Sunday", "last Sunday", date(2023, 5, 7), date(2023, 5, 8)),
        ("next Friday is the party", "next Friday", date(2023, 5, 12), date(2023, 5, 13)),
        ("RDV vendredi prochain chez le véto", "vendredi prochain", date(2023, 5, 12), date(2023, 5, 13)),
        ("On se voit la semaine prochaine ?", "la semaine prochaine", date(2023, 5, 15), date(2023, 5, 22)),
        ("last week was hard", "last week", date(2023, 5, 1), date(2023, 5, 8)),
        ("I painted that sunrise last year", "last year", date(2022, 1, 1), date(2023, 1, 1)),
        ("le rendez-vous est décalé au 18 mai", "18 mai", date(2023, 5, 18), date(2023, 5, 19)),
        ("The move is on May 18th", "May 18th", date(2023, 5, 18), date(2023, 5, 19)),
        ("dans trois semaines on part", "dans trois semaines", date(2023, 5, 29), date(2023, 6, 5)),
        ("Je déménage le 3 mars 2024", "3 mars 2024", date(2024, 3, 3), date(2024, 3, 4)),
    ],
)  # fmt: skip
def test_a_relative_date_is_resolved_against_the_day_the_message_was_sent(text, phrase, start, end):
    found = resolve_dates(text, MONDAY)

    assert [(m.phrase, m.start, m.end) for m in found] == [(phrase, start, end)]


@pytest.mark.parametrize("text", ["it may 3 be", "on verra bien", "I'll call you later"])
def test_words_that_are_not_dates_resolve_to_nothing(text):
    assert resolve_dates(text, MONDAY) == []


def test_a_date_without_a_year_is_the_one_nearest_to_the_message():
    # Said in late December, "on 3 January" is next month, not eleven months ago.
    found = resolve_dates("Reprise du travail le 3 janvier", datetime(2024, 12, 28))

    assert found[0].start == date(2025, 1, 3)


def test_the_pack_shows_the_resolved_date_and_a_when_question_finds_it(services):
    services.archive.store_batch(
        [
            message("3", "I went to a LGBTQ support group yesterday", MONDAY, sender="Caroline"),
            message("4", "Wow, that's cool!", MONDAY + timedelta(seconds=5), sender="Melanie"),
            message("9", "I'm thinking of going back to school", MONDAY + timedelta(days=20)),
        ]
    )
    services.archive.index_pending()

    pack = build_pack(services, "When did Caroline go to the LGBTQ support group?").to_json()

    item = next(i for layer in pack["layers"].values() for i in layer["items"])
    assert item["message_ids"] == ["3"]
    assert item["resolved_dates"] == [
        {"message_id": "3", "phrase": "yesterday", "date": "2023-05-07"}
    ]


def test_a_question_about_a_period_finds_a_message_that_names_it_from_outside(services):
    # Asked on Saturday 15 June about last week (3-9 June); the message was sent on Monday 10
    # June about "last Saturday", the 8th.
    services.archive.store_batch(
        [
            message("50", "Samedi dernier on a fait le marché de Vienne avec Hugo", datetime(2024, 6, 10, 9)),
            message("51", "Le plombier passe jeudi", datetime(2024, 5, 20, 9)),
        ]
    )  # fmt: skip
    services.archive.index_pending()

    pack = build_pack(services, "Qu'est-ce que j'ai fait la semaine dernière ?")

    assert pack.time_window is not None and pack.time_window.label == "la semaine derniere"
    shown = [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]
    assert "50" in shown  # sent after the week, about a day inside it


@pytest.mark.parametrize(
    ("question", "found", "walked"),
    [
        # Recent: walked from the period's start, not through every date named since 2019.
        ("Qu'est-ce que j'ai fait la semaine dernière ?", "50", "ix_turn_dates_end"),
        ("What did I do in 2019?", "40", "ix_turn_dates_start"),  # ... old: from the first one
    ],
)
def test_a_periods_dated_messages_are_walked_from_the_nearer_side(
    services, question, found, walked
):
    from sqlalchemy import event

    services.archive.store_batch(
        [
            message("40", "On part à Lisbonne le 3 mars 2019", datetime(2019, 2, 1, 9)),
            message("41", "Le concert est le 12 octobre 2021", datetime(2021, 9, 1, 9)),
            message("42", "Mariage de Léa le 2 juillet 2022", datetime(2022, 1, 5, 9)),
            message("50", "Samedi dernier on a fait le marché de Vienne", datetime(2024, 6, 10, 9)),
        ]
    )  # fmt: skip
    services.archive.index_pending()
    walks: list[str] = []

    @event.listens_for(services.db.engine, "before_cursor_execute")
    def _seen(_conn, _cursor, statement, *_args):
        if "FROM turn_dates d" in statement:
            walks.append(statement)

    pack = build_pack(services, question)

    shown = [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]
    assert found in shown
    assert walks
    if services.db.dialect == "sqlite":  # PostgreSQL's planner chooses on its own
        assert all(f"INDEXED BY {walked}" in w for w in walks)
