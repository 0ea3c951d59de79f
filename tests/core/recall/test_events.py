"""'Before/after the move' is dated from the move itself, as the archive tells it."""

from datetime import datetime, timedelta

import pytest

from core.recall.pack import build_pack
from tests.core.memory.helpers import message

MOVE = datetime(2024, 5, 18)


@pytest.fixture
def moving(services):
    """Months of messages around a move from Paris to Lyon on Saturday 18 May (no entry)."""
    day = datetime(2024, 2, 1, 20, 0)
    chatter = ["tu fais quoi ce soir ?", "on se fait un ciné ?", "il pleut encore", "bonne nuit !"]
    captures = [
        message(str(900 + n), chatter[n % 4], day + timedelta(days=3 * n)) for n in range(35)
    ]
    captures += [
        message(
            "10",
            "On commence à chercher un appart à Lyon, le déménagement c'est pour ce printemps",
            datetime(2024, 3, 2, 19, 0),
        ),
        message("11", "Le loyer à Paris est de 1200 euros par mois", datetime(2024, 4, 2, 10)),
        message(
            "12",
            "Le déménagement est prévu le 18 mai, j'ai réservé le camion",
            datetime(2024, 5, 2, 18, 0),
        ),
        message("13", "On a déménagé hier, épuisée mais contente !", datetime(2024, 5, 19, 9)),
        message("14", "Premier loyer à Lyon payé : 950 euros", datetime(2024, 5, 25, 10)),
    ]
    services.archive.store_batch(captures)
    services.archive.index_pending()


def _shown(pack) -> list[str]:
    return [m for i in pack.items() if i["source_type"] == "archive" for m in i["message_ids"]]


@pytest.mark.parametrize(
    "question",
    ["Combien je payais de loyer avant le déménagement ?", "How much was my rent before the move?"],
)
def test_before_the_move_ends_on_the_day_of_the_move_not_its_first_mention(
    services, moving, question
):
    pack = build_pack(services, question)

    assert pack.time_window.end == MOVE
    shown = _shown(pack)
    assert "11" in shown  # 1200 euros, in April
    assert "14" not in shown  # 950 euros, after the move


def test_after_the_move_starts_on_the_day_of_the_move(services, moving):
    pack = build_pack(services, "Combien je paie de loyer depuis le déménagement ?")

    assert pack.time_window.start == MOVE
    shown = _shown(pack)
    assert "14" in shown
    assert "11" not in shown
