"""Text messages go through the core pipeline and come back as well-formed Telegram messages."""

from __future__ import annotations

import threading

from bot.format import LIMIT
from bot.i18n import TEXTS
from tests.bot import updates
from tests.bot.support import answers, last_user_text, rows, scalar, telegram_html


async def test_a_message_is_captured_answered_by_the_model_and_shows_typing_meanwhile(
    bot, llm, telegram, services
):
    llm.enqueue("fake-lite", "Ta sœur arrive **mardi**.")

    reply = await bot.say("Quand est-ce que ma sœur arrive ?")

    assert reply["text"] == "Ta sœur arrive <b>mardi</b>."
    assert telegram.sent_messages(42)[0]["parse_mode"] == "HTML"
    assert "Quand est-ce que ma sœur arrive ?" in last_user_text(answers(llm)[0])
    captured = rows(services, "SELECT role, kind, chat_id, user_id, text FROM captures")
    assert ("user", "message", "42", "42", "Quand est-ce que ma sœur arrive ?") in captured
    calls = [name for name, _ in telegram.calls]
    typing = [p for p in telegram.calls_to("sendChatAction") if p["action"] == "typing"]
    assert typing and int(typing[0]["chat_id"]) == 42
    assert calls.index("sendChatAction") < calls.index("sendMessage")


async def test_a_long_reply_is_split_at_paragraph_boundaries_in_order(bot, llm, telegram):
    # Just over the limit: the reply is archived and embedded like any other, which takes time.
    paragraphs = [f"Point {n} : " + " ".join(["détail"] * (55 + n)) + "." for n in range(11)]
    llm.enqueue("fake-lite", "\n\n".join(paragraphs))

    await bot.say("Fais-moi un rapport complet.")
    await bot.settle()  # the rest of the reply was sent before /help was handled

    texts = [m["text"] for m in telegram.sent_messages(42)][:-1]
    assert sum(len(t) for t in texts) > LIMIT and len(texts) > 1
    assert all(len(t) <= LIMIT for t in texts)
    assert [p for t in texts for p in t.split("\n\n")] == paragraphs


async def test_hostile_markup_from_the_model_is_escaped(bot, llm, telegram):
    llm.enqueue(
        "fake-lite",
        '<script>alert("pwn")</script> **gras jamais fermé & AT&T, <b>faux gras</b>\n\n'
        "```html\n<a href='x'>a < b</a>\n```",
    )

    reply = await bot.say("Montre-moi un exemple de HTML.")

    sent = telegram.sent_messages(42)[0]
    assert sent["parse_mode"] == "HTML"
    assert "<script>" not in reply["text"]
    shown = telegram_html(reply["text"])  # what Telegram accepts and the user reads
    assert shown == (
        '<script>alert("pwn")</script> **gras jamais fermé & AT&T, <b>faux gras</b>\n\n'
        "<a href='x'>a < b</a>"
    )


async def test_html_that_telegram_rejects_is_resent_as_the_same_text_without_markup(
    bot, llm, telegram
):
    telegram.fail("sendMessage", 400, 1, "Bad Request: can't parse entities: Unsupported start tag")
    llm.enqueue("fake-lite", "**Important** : 5 < 6 & 7 > 3")

    reply = await bot.say("Compare ces nombres.")

    rejected = telegram.calls_to("sendMessage!400")
    assert rejected[0]["parse_mode"] == "HTML"
    assert reply["text"] == "Important : 5 < 6 & 7 > 3"
    assert "parse_mode" not in telegram.sent_messages(42)[0]
    assert len(telegram.sent_messages(42)) == 1  # no apology, no error text


async def test_one_chat_is_answered_in_order_while_another_chat_is_not_kept_waiting(
    bot, llm, telegram
):
    partner = updates.user(updates.PARTNER_ID, "fr", "Léa")
    release_first = threading.Event()
    llm.answer_when("première question", "Réponse un.", hold=release_first)
    llm.answer_when("deuxième question", "Réponse deux.")
    llm.answer_when("question de Léa", "Réponse à Léa.")

    bot.push(updates.message("Ma première question"))
    bot.push(updates.message("Ma deuxième question"))
    bot.push(updates.message("Une question de Léa", partner))
    # Léa is answered while Camille's first reply is still held at the model.
    await bot.replies(updates.PARTNER_ID, 1)
    assert telegram.sent_messages(42) == []
    release_first.set()

    first, second = await bot.replies(42, 2)
    assert (first["text"], second["text"]) == ("Réponse un.", "Réponse deux.")
    asked = [last_user_text(r) for r in answers(llm)]
    assert asked.index("Ma première question") < asked.index("Ma deuxième question")


async def test_an_edited_message_is_not_answered_or_archived_again(bot, llm, telegram, services):
    llm.answer_when("Rappelle-moi", "D'accord.")
    update = updates.message("Rappelle-moi d'appeler Léa")
    bot.push(update)
    await bot.replies(42)
    archived = scalar(services, "SELECT count(*) FROM captures")

    edited = {**update["message"], "text": "Rappelle-moi d'appeler Hugo", "edit_date": 1}
    bot.push({"edited_message": edited})
    await bot.settle()

    assert [m["text"] for m in telegram.messages(42)][:-1] == ["D'accord."]
    assert len(answers(llm)) == 1
    assert scalar(services, "SELECT count(*) FROM captures") == archived


async def test_a_reply_telegram_refuses_for_another_reason_ends_in_an_apology(
    bot, llm, telegram, caplog
):
    telegram.fail("sendMessage", 400, 1, "Bad Request: message is too long")
    llm.answer_when("Raconte", "Une histoire.")

    reply = await bot.say("Raconte-moi une histoire.")

    assert reply["text"] == TEXTS["fr"]["apology"]
    assert "BadRequest: Message is too long" in caplog.text and "Traceback" in caplog.text


async def test_typing_shows_before_the_work_on_a_message_starts(bot, llm, telegram, services):
    captures_when_typing = []

    def count_captures(params):
        captures_when_typing.append(services.db.rows("SELECT count(*) FROM captures")[0][0])

    telegram.on("sendChatAction", count_captures)

    await bot.say("Quelle est la capitale du Pérou ?")

    assert captures_when_typing[0] == 0
