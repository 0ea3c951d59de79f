"""/remember of something already kept: the reply says so, the one entry is confirmed."""

from __future__ import annotations

from tests.bot import updates
from tests.bot.support import rows, telegram_html


async def test_remember_twice_confirms_the_one_entry_and_says_so(bot, services):
    bot.push(updates.message("/remember Camille n'aime pas la coriandre"))
    first = (await bot.replies(42))[0]
    bot.push(updates.message("/remember camille n’aime pas la coriandre !"))
    second = (await bot.replies(42, 2))[1]

    [(memory_id, observations)] = rows(
        services, "SELECT memory_id, observations FROM memory_entries"
    )
    assert observations == 2
    assert "pas" in memory_id.split("-")
    assert telegram_html(first["text"]) == f"C'est noté sous {memory_id} (semantic)."
    assert telegram_html(second["text"]) == f"Déjà retenu — confirmé {memory_id} (dit 2 fois)."
    # Both command messages are archived and are the entry's sources.
    captures = rows(services, "SELECT id FROM captures WHERE kind = 'command' ORDER BY sent_at")
    sources = services.memory.get(memory_id).sources
    assert sorted(s["capture_id"] for s in sources) == sorted(c[0] for c in captures)
    assert len(captures) == 2
