"""Slash commands and their buttons, driven through real updates and callback queries."""

from __future__ import annotations

import pytest

from bot.i18n import TEXTS
from core.archive.records import CaptureIn
from core.memory.api import remember
from tests.bot import updates
from tests.bot.support import answers, last_user_text, rows, scalar, telegram_html

FR = TEXTS["fr"]


async def test_start_greets_the_user_by_name_safely(bot):
    person = updates.user(updates.OPERATOR_ID, "fr", "Cam & <Co>")

    reply = await bot.say("/start", person)

    assert telegram_html(reply["text"]).startswith("Bonjour Cam & <Co> !")


async def test_new_restarts_the_conversation_and_purges_session_memory(
    bot, llm, telegram, services
):
    llm.answer_when("Mon chat s'appelle Pixel", "Joli nom.")
    await bot.say("Mon chat s'appelle Pixel.")
    telegram.add_file("notes-1", b"Liste de courses : lait, oeufs, farine.")
    bot.push(updates.document("notes-1", "courses.txt", 39))
    await bot.replies(42, 2)
    assert scalar(services, "SELECT count(*) FROM session_chunks WHERE chat_id = '42'") > 0

    assert (await bot.say("/new"))["text"] == FR["new"]

    assert services.window("telegram", "42", "42").turns() == []
    assert scalar(services, "SELECT count(*) FROM session_chunks WHERE chat_id = '42'") == 0
    llm.answer_when("Comment s'appelle mon chat", "Je ne sais pas.")
    await bot.say("Comment s'appelle mon chat ?")
    request = answers(llm)[-1]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "Pixel" not in last_user_text(request)


async def test_an_unknown_command_gets_pointed_to_help(bot, llm):
    assert (await bot.say("/meteo Paris"))["text"] == FR["unknown_command"]
    assert llm.requests == []


async def test_remember_saves_an_entry_sourced_to_the_command_message(bot, services):
    bot.push(updates.message("/remember Mon code de casier est 4711"))
    reply = (await bot.replies(42))[0]

    memory_id = rows(services, "SELECT memory_id FROM memory_entries")[0][0]
    assert f"<code>{memory_id}</code>" in reply["text"]
    entry = services.memory.get(memory_id)
    assert entry.canonical_text == "Mon code de casier est 4711"
    capture = rows(
        services, "SELECT id, kind, text, message_id FROM captures WHERE kind = 'command'"
    )
    assert len(capture) == 1 and capture[0][2] == "/remember Mon code de casier est 4711"
    assert [s["capture_id"] for s in entry.sources] == [capture[0][0]]
    assert entry.sources[0]["message_id"] == capture[0][3]


async def test_remember_without_text_explains_its_usage(bot, services):
    assert (await bot.say("/remember"))["text"] == FR["remember_usage"]
    assert scalar(services, "SELECT count(*) FROM memory_entries") == 0


async def test_forget_by_id_asks_for_confirmation_then_forgets(bot, services):
    entry = remember(services, "Mon code de casier est 4711")

    prompt = await bot.say(f"/forget {entry.memory_id}")

    assert entry.memory_id in prompt["text"] and "4711" in prompt["text"]
    yes, cancel = updates.buttons(prompt)
    assert (yes[0], cancel[0]) == (FR["yes_forget"], FR["cancel"])
    assert services.memory.get(entry.memory_id) is not None  # nothing happens before "yes"
    edit = await bot.press(prompt, yes[1])
    assert edit["text"] == FR["forgotten_undo"].format(id=entry.memory_id, n=30)
    assert services.memory.get(entry.memory_id) is None


async def test_forget_by_words_offers_matches_then_confirms(bot, services):
    keep = remember(services, "Le dentiste de Camille est le Dr Martin")
    target = remember(services, "Le code du casier de la piscine est 4711")

    picks = await bot.say("/forget casier piscine")

    assert picks["text"] == FR["forget_pick"]
    choice = next(data for label, data in updates.buttons(picks) if target.memory_id in label)
    confirm = await bot.press(picks, choice)
    assert target.memory_id in confirm["text"]
    yes = updates.buttons(confirm)[0][1]
    done = await bot.press(picks, yes)
    assert done["text"] == FR["forgotten_undo"].format(id=target.memory_id, n=30)
    assert services.memory.get(target.memory_id) is None
    assert services.memory.get(keep.memory_id) is not None


async def test_cancelling_a_forget_keeps_the_memory(bot, services):
    entry = remember(services, "Mon code de casier est 4711")

    prompt = await bot.say(f"/forget {entry.memory_id}")
    edit = await bot.press(prompt, updates.buttons(prompt)[1][1])

    assert edit["text"] == FR["cancelled"]
    assert services.memory.get(entry.memory_id) is not None


async def test_an_older_forget_prompt_still_forgets_the_memory_it_showed(bot, services):
    first = remember(services, "Mon code de casier est 4711")
    second = remember(services, "Ma pointure est 38")

    first_prompt = await bot.say(f"/forget {first.memory_id}")
    await bot.say(f"/forget {second.memory_id}")
    edit = await bot.press(first_prompt, updates.buttons(first_prompt)[0][1])

    assert services.memory.get(second.memory_id) is not None
    assert services.memory.get(first.memory_id) is None
    assert edit["text"] == FR["forgotten_undo"].format(id=first.memory_id, n=30)


async def test_forget_finding_nothing_says_so(bot, services):
    assert (await bot.say("/forget zeppelin"))["text"] == FR["forget_none"]


async def test_topics_lists_what_is_remembered(bot, services):
    assert (await bot.say("/topics"))["text"] == FR["topics_none"]
    entry = remember(services, "Camille joue du violoncelle le mardi")

    listing = await bot.say("/topics")

    assert listing["text"].startswith(FR["topics_title"])
    assert f"<code>{entry.memory_id}</code>" in listing["text"]
    telegram_html(listing["text"])


async def test_proposals_come_with_buttons_approve_saves_and_reject_archives(
    bot, llm, telegram, services
):
    assert (await bot.say("/proposals"))["text"] == FR["proposals_none"]
    await bot.say("Je préfère le thé vert au café.")
    await bot.say("Je déteste les réunions le lundi.")
    # Learned once each answer is sent: a state to wait for (the chat's next update is
    # handled after it all the same).
    await bot.until(lambda: services.proposals.count() == 2, "both proposals filed")

    bot.push(updates.message("/proposals"))
    shown = (await bot.replies(42, 5))[-2:]

    by_text = {telegram_html(m["text"]).split("\n")[1]: m for m in shown}
    tea, meetings = (
        by_text["Je préfère le thé vert au café."],
        by_text["Je déteste les réunions le lundi."],
    )
    assert [label for label, _ in updates.buttons(tea)] == [FR["approve"], FR["reject"]]
    approved = await bot.press(tea, updates.buttons(tea)[0][1])
    memory_id = rows(services, "SELECT memory_id FROM memory_entries")[0][0]
    assert approved["text"] == FR["approved"].format(id=memory_id)
    assert services.memory.get(memory_id).canonical_text == "Je préfère le thé vert au café."
    rejected = await bot.press(meetings, updates.buttons(meetings)[1][1])
    assert rejected["text"] == FR["rejected"]
    statuses = dict(rows(services, "SELECT text, status FROM proposals"))
    assert statuses == {
        "Je préfère le thé vert au café.": "approved",
        "Je déteste les réunions le lundi.": "rejected",
    }
    assert scalar(services, "SELECT count(*) FROM memory_entries") == 1


SYNTHESIS = "## Consensus\nAttendre le printemps.\n\n## Divergences\nLe prix.\n\n## Recommendations\nComparer trois devis."


async def test_council_reports_each_round_then_sends_the_synthesis(bot, llm, telegram):
    llm.answer_when("neutral rapporteur", SYNTHESIS)

    bot.push(
        updates.message(
            "/council Faut-il changer la chaudière cette année ? "
            "--skills devils-advocate,financial-analyst,privacy-lawyer"
        )
    )
    progress, synthesis = await bot.replies(42, 2)

    assert progress["text"] == FR["council_started"].format(n=3, rounds=3)
    edits = telegram.calls_to("editMessageText")
    assert [e["message_id"] for e in edits] == [progress["message_id"]] * 3
    assert [e["text"] for e in edits] == [
        FR["council_round"].format(round=n, rounds=3, ok=3, failed="") for n in (1, 2, 3)
    ]
    assert telegram_html(synthesis["text"]).startswith("Consensus\nAttendre le printemps.")
    synthesis_request = next(r for r in llm.requests if "rapporteur" in last_user_text(r))
    assert "Faut-il changer la chaudière" in last_user_text(synthesis_request)
    assert llm.requests[-1] is synthesis_request  # after the three experts' three rounds
    assert len(llm.requests) >= 10


async def test_council_without_a_question_explains_its_usage(bot, llm):
    assert (await bot.say("/council --skills a,b"))["text"] == FR["council_usage"]
    assert llm.requests == []


async def test_private_mode_keeps_nothing_until_it_is_turned_off(bot, llm, services):
    assert (await bot.say("/private on"))["text"] == FR["private_on"]
    before = scalar(services, "SELECT count(*) FROM captures")
    traced = scalar(services, "SELECT count(*) FROM traces")
    llm.answer_when("allergie au pollen", "Noté pour cette session.")

    await bot.say("Mon secret médical : allergie au pollen de bouleau.")
    # The exchange's trace is stored once the answer is sent: wait for it, then read it.
    await bot.until(
        lambda: scalar(services, "SELECT count(*) FROM traces") > traced, "the exchange's trace"
    )

    assert scalar(services, "SELECT count(*) FROM captures") == before
    traces = " ".join(str(r) for r in rows(services, "SELECT * FROM traces"))
    assert "bouleau" not in traces and "allergie" not in traces
    assert services.window("telegram", "42", "42").turns() == []
    assert services.proposals.count() == 0

    assert (await bot.say("/private off"))["text"] == FR["private_off"]
    await bot.say("Je préfère le thé vert au café.")
    texts = [r[0] for r in rows(services, "SELECT text FROM captures")]
    assert "Je préfère le thé vert au café." in texts


@pytest.fixture
def spend_cap(monkeypatch, bot_env):
    monkeypatch.setenv("ELORA_DAILY_SPEND_CAP", "2.5")


async def test_status_shows_spend_models_spool_and_pending_proposals(spend_cap, bot, services):
    services.traces.record(surface="telegram", chat_id="42", cost=0.0123)
    services.spool.append(
        CaptureIn(
            surface="telegram", chat_id="42", text="en attente", sent_at=services.clock.now()
        ),
        reason="database locked",
    )
    for text in ("Je préfère le thé", "Je joue du violon"):
        services.proposals.create(text=text, kind="preference", tier="personalized",
                                  candidate={"text": text})  # fmt: skip

    shown = telegram_html((await bot.say("/status"))["text"])

    assert "Dépenses du jour : 0.0123 $ / 2.50 $" in shown
    assert "LITE=openai/fake-lite" in shown
    assert "Spool en attente : 1" in shown
    assert "Propositions en attente : 2" in shown
