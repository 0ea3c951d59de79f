"""Two allowlisted people share one Elora: neither recalls the other's private chat, except
the operator, who recalls everything (issue 12 §6)."""

from __future__ import annotations

import json

from tests.bot import updates

PARTNER = updates.user(updates.PARTNER_ID, "fr", "Hugo")


def _prompts(llm, marker: str) -> list[str]:
    """Every prompt the model got for the request whose user message holds `marker`."""
    found = []
    for request in llm.requests:
        text = json.dumps(request.get("messages", []), ensure_ascii=False)
        if marker in text:
            found.append(text)
    return found


async def test_the_partner_does_not_recall_the_operators_private_chat(bot, llm, services):
    llm.answer_when("coffre", "Je ne sais pas.")
    await bot.say("Note : le code de mon coffre à la banque est 4242, ne l'oublie pas")
    services.archive.index_pending()

    await bot.say("C'est quoi le code du coffre à la banque ?", PARTNER)

    prompts = _prompts(llm, "C'est quoi le code du coffre")
    assert prompts and not any("4242" in p for p in prompts)


async def test_the_operator_recalls_what_the_partner_said_in_his_chat(bot, llm, services):
    llm.answer_when("casier", "1357.")
    await bot.say("Le code de mon casier au bureau est 1357", PARTNER)
    services.archive.index_pending()

    await bot.say("C'est quoi le code du casier de Hugo au bureau ?")

    prompts = _prompts(llm, "casier de Hugo")
    assert prompts and any("1357" in p for p in prompts)
