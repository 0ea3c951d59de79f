"""Only allowlisted Telegram users are served; nothing of anyone else's is kept."""

from __future__ import annotations

from bot.i18n import TEXTS
from tests.bot import updates
from tests.bot.support import last_user_text, scalar

STRANGER = updates.user(updates.STRANGER_ID, "en", "Mallory")


def stored_for(services, person_id: int) -> dict[str, int]:
    """Rows anywhere that came from a person or their private chat."""
    who = str(person_id)
    return {
        "captures": scalar(
            services, "SELECT count(*) FROM captures WHERE user_id = ? OR chat_id = ?", who, who
        ),
        "traces": scalar(services, "SELECT count(*) FROM traces WHERE chat_id = ?", who),
        "session_chunks": scalar(
            services, "SELECT count(*) FROM session_chunks WHERE user_id = ?", who
        ),
        "proposals": scalar(services, "SELECT count(*) FROM proposals"),
        "memories": scalar(services, "SELECT count(*) FROM memory_entries"),
    }


async def test_a_stranger_gets_a_short_refusal_and_nothing_of_theirs_is_stored(
    bot, llm, telegram, services
):
    telegram.add_file("doc-1", b"Mallory's secret plans")
    bot.push(updates.message("I prefer that you remember my PIN 4711", STRANGER))
    bot.push(updates.message("/remember my PIN is 4711", STRANGER))
    bot.push(updates.document("doc-1", "plans.txt", 22, person=STRANGER))

    refusals = await bot.replies(updates.STRANGER_ID, 3)

    assert [m["text"] for m in refusals] == [TEXTS["en"]["refused"]] * 3
    assert stored_for(services, updates.STRANGER_ID) == {
        "captures": 0, "traces": 0, "session_chunks": 0, "proposals": 0, "memories": 0,
    }  # fmt: skip
    assert llm.requests == []
    assert telegram.calls_to("getFile") == []


async def test_in_a_group_only_allowlisted_members_are_answered(bot, llm, telegram, services):
    group = updates.group_chat()
    llm.answer_when("Qui vient dîner", "Léa et Hugo.")
    bot.push(updates.message("Who is coming to dinner? I prefer pizza", STRANGER, group))
    bot.push(updates.message("Qui vient dîner ce soir ?", updates.OPERATOR, group))
    await bot.settle(group)

    answers = [m["text"] for m in telegram.messages(group["id"])]
    assert answers[0] == "Léa et Hugo."
    assert len(answers) == 2  # the answer and the help text: the stranger got nothing
    assert stored_for(services, updates.STRANGER_ID)["captures"] == 0
    assert all("pizza" not in last_user_text(r) for r in llm.requests)


async def test_a_strangers_button_press_is_refused_and_changes_nothing(bot, telegram, services):
    proposal = services.proposals.create(
        text="Camille prefers tea", kind="preference", tier="personalized",
        candidate={"text": "Camille prefers tea", "kind": "preference"},
    )  # fmt: skip
    shown = {"message_id": 99, "date": 0, "chat": updates.private_chat(STRANGER), "text": "…"}
    bot.push(updates.callback(shown, f"pr:a:{proposal.id}", STRANGER))
    # Handled after the press (same chat, in order): when it is refused, the press is done.
    await bot.say("hello?", STRANGER)

    answer = telegram.calls_to("answerCallbackQuery")[0]
    assert answer["text"] == TEXTS["en"]["refused"] and answer["show_alert"] is True
    assert services.proposals.get(proposal.id).status == "pending"
