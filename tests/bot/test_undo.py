"""The Undo button under Telegram confirmations: approve, remember and forget can be taken back
for ELORA_UNDO_MINUTES; a forget's undo lives in the bot's memory only, and says so."""

from __future__ import annotations

from bot.i18n import TEXTS
from core.memory.api import remember
from tests.bot import updates
from tests.bot.support import rows, scalar, telegram_html

FR = TEXTS["fr"]
PARTNER = updates.user(updates.PARTNER_ID, "fr", "Léa")


def undo_button(sent: dict) -> str:
    [(label, data)] = [b for b in updates.buttons(sent) if b[1].startswith("un:")]
    assert label == FR["undo"].format(n=30)
    return data


async def test_an_approval_from_the_proposals_list_can_be_undone(bot, llm, services):
    await bot.say("Je préfère le thé vert au café.")
    await bot.until(lambda: services.proposals.count() == 1, "the proposal filed")
    bot.push(updates.message("/proposals"))
    shown = (await bot.replies(42, 2))[-1]

    approved = await bot.press(shown, updates.buttons(shown)[0][1])
    memory_id = rows(services, "SELECT memory_id FROM memory_entries")[0][0]
    assert approved["text"] == FR["approved"].format(id=memory_id)

    undone = await bot.press(shown, undo_button(approved))

    assert telegram_html(undone["text"]) == telegram_html(
        FR["undone"].format(what=f"<code>{memory_id}</code>")
    )
    assert scalar(services, "SELECT count(*) FROM memory_entries") == 0
    assert [p.status for p in services.proposals.list()] in (["pending"], ["recommended"])


async def test_a_remember_can_be_undone(bot, services):
    reply = await bot.say("/remember Mon code de casier est 4711")
    memory_id = rows(services, "SELECT memory_id FROM memory_entries")[0][0]

    undone = await bot.press(reply, undo_button(reply))

    assert memory_id in undone["text"]
    assert services.memory.get(memory_id) is None


async def test_a_forget_is_undone_from_the_bots_memory_and_says_nothing_is_on_disk(bot, services):
    entry = remember(services, "Mon code de casier est 4711")
    prompt = await bot.say(f"/forget {entry.memory_id}")
    assert telegram_html(prompt["text"]).endswith(
        "Annulable pendant 30 minutes tant que je tourne ; rien n'en est gardé sur disque."
    )

    done = await bot.press(prompt, updates.buttons(prompt)[0][1])
    assert done["text"] == FR["forgotten_undo"].format(id=entry.memory_id, n=30)
    assert services.memory.get(entry.memory_id) is None
    assert "casier est 4711" not in str(rows(services, "SELECT * FROM undo_actions"))

    undone = await bot.press(prompt, undo_button(done))

    assert entry.memory_id in undone["text"]
    assert services.memory.require(entry.memory_id).canonical_text == "Mon code de casier est 4711"


async def test_erasing_the_messages_too_offers_no_undo(bot, services):
    await bot.say("/remember Mon code de casier est 4711")
    (memory_id,) = [e.memory_id for e in services.memory.list()]
    prompt = await bot.say(f"/forget {memory_id}")
    assert FR["forget_messages_no_undo"] in prompt["text"]

    done = await bot.press(prompt, updates.buttons(prompt)[2][1])

    assert done["text"] == FR["forgotten_with_messages"].format(id=memory_id, n=1)
    assert updates.buttons(done) == []


async def test_only_who_did_it_or_the_operator_can_undo(bot, services):
    partner_chat = updates.private_chat(PARTNER)
    reply = await bot.say("/remember Mon vélo est au garage", PARTNER, partner_chat)
    operator_saved = await bot.say("/remember Ma pointure est 38")

    refused = await bot.press(operator_saved, undo_button(operator_saved), person=PARTNER)
    assert refused["text"].startswith(FR["undo_failed"].format(why="")[:10])
    assert scalar(services, "SELECT count(*) FROM memory_entries") == 2
    await bot.press(reply, undo_button(reply), person=PARTNER)

    assert [e.canonical_text for e in services.memory.list()] == ["Ma pointure est 38"]


async def test_topics_show_how_important_each_memory_is(bot, services):
    remember(services, "Camille joue du violoncelle le mardi", importance=4)

    listing = await bot.say("/topics")

    assert "[semantic] ★4 " in telegram_html(listing["text"])
