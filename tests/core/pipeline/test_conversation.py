"""The conversation window: it survives a restart, and when it grows it is distilled, not cut."""

import asyncio
import threading

from core.config import load_settings
from core.pipeline import Request
from core.services import Services
from tests.core.routing.support import ask, system_of
from tests.fakes import ScriptedModel
from tests.llm_server import Reply

OSLO = (
    "Oslo trip notes: the flight leaves Lyon on Tuesday at 7:40, we land at 11:15, the hotel is "
    "the Thon Opera near the central station, check-in from 15:00, and Ingrid meets us for dinner "
    "at Maaemo on Wednesday evening; bring the grey wool coat and the travel adapter. Can you "
    "keep that in mind?"
)
KITCHEN = (
    "Kitchen renovation notes: the carpenter quoted 8,400 euros for the oak cabinets, the plumber "
    "wants 1,250 for moving the sink under the window, and the tiles from the showroom in "
    "Villeurbanne cost 64 euros per square metre, about 18 square metres in total; work starts "
    "on the 3rd of April. Can you keep that in mind?"
)
BOOK_CLUB = (
    "Book club notes: the next session is about The Left Hand of Darkness, hosted by Camille at "
    "her flat in the Croix-Rousse; everyone brings a dish, I promised a lemon tart, and we vote on "
    "the next three titles before the end of the month; Hugo has not paid his share of the room "
    "yet. Can you keep that in mind?"
)
SUMMARY = (
    "- Oslo trip: flight Tuesday 7:40 from Lyon, hotel Thon Opera.\n- Kitchen: cabinets 8,400 €."
)


def dialogue(request: dict) -> list[tuple[str, str]]:
    """The user and assistant turns of a request, in order."""
    return [
        (m["role"], m["content"]) for m in request["messages"] if m["role"] in ("user", "assistant")
    ]


async def test_the_window_survives_a_restart(home, monkeypatch, embedder, clock):
    # In-process model (tests/fakes.py): what the window holds is the point, not the HTTP path.
    monkeypatch.setenv("ELORA_MODEL_LITE", "scripted/lite")
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "heuristic")
    model = ScriptedModel("Noted: Tuesday at 7:40.", "Tuesday at 7:40.")
    settings = load_settings()
    first = Services(settings, clock=clock, embedder=embedder, llm=model)
    await ask(first, OSLO)
    first.close()

    restarted = Services(settings, clock=clock, embedder=embedder, llm=model)
    try:
        reply = await ask(restarted, "When does my flight to Oslo leave?")
    finally:
        restarted.close()

    assert reply.text == "Tuesday at 7:40."
    assert dialogue(model.history[-1]) == [
        ("user", OSLO),
        ("assistant", "Noted: Tuesday at 7:40."),
        ("user", "When does my flight to Oslo leave?"),
    ]


async def test_windows_are_per_chat(services, llm):
    llm.enqueue("fake-lite", "Noted.", "I have nothing on that here.")
    await ask(services, OSLO, chat_id="family")

    await ask(services, "When does my flight to Oslo leave?", chat_id="work")

    assert dialogue(llm.requests_for("fake-lite")[-1]) == [
        ("user", "When does my flight to Oslo leave?")
    ]


async def test_a_long_window_is_distilled_into_session_memory(make_services, llm):
    services = make_services(MODEL_CONTEXT_TOKENS="1024")  # the window may use ~30 %: 307 tokens
    window = services.window("cli", "c1", "operator")
    llm.enqueue("fake-lite", "Noted.", "Noted.")
    await ask(services, OSLO)
    await ask(services, KITCHEN)
    assert window.tokens() < 1024 * 0.3
    llm.enqueue("fake-lite", "Noted.", SUMMARY)

    await ask(services, BOOK_CLUB)  # the exchange that takes the window past 30 %

    # Distilled once the answer was out: the older half went to the distiller as quoted data.
    distil = llm.requests_for("fake-lite")[-1]
    assert f"> user: {OSLO}" in distil["messages"][0]["content"]
    assert window.summary() == SUMMARY and window.tokens() < 1024 * 0.3
    llm.enqueue("fake-lite", "A lemon tart.")

    reply = await ask(services, "What did I promise to bake for the book club?")

    assert reply.text == "A lemon tart."
    answer = llm.requests_for("fake-lite")[-1]
    # The answer sees the summary instead of the older turns, plus the recent turns verbatim.
    system = system_of(answer)
    assert "> - Oslo trip: flight Tuesday 7:40 from Lyon, hotel Thon Opera." in system
    assert 'source "conversation:c1"' in system
    turns = [content for _, content in dialogue(answer)]
    assert OSLO not in turns and KITCHEN not in turns
    assert BOOK_CLUB in turns
    assert window.summary() == SUMMARY  # nothing more to distil before that answer
    # Nothing was dropped: the distilled turns are searchable in session memory.
    hits = services.session_memory.search(
        "operator", "c1", "conversation:c1", "When does the Oslo flight leave Lyon?"
    )
    assert any("7:40" in h.text for h in hits)


async def two_notes(make_services, llm) -> Services:
    """A 1,024-token model's window holding two long notes: the third takes it past 30 %
    (each note is answered "Noted.")."""
    services = make_services(MODEL_CONTEXT_TOKENS="1024")
    llm.enqueue("fake-lite", "Noted.", "Noted.", "Noted.")
    for note in (OSLO, KITCHEN):
        await ask(services, note)
    return services


async def test_no_answer_waits_for_the_window_to_be_distilled(make_services, llm):
    services = await two_notes(make_services, llm)
    arrived, release = threading.Event(), threading.Event()
    llm.answer_when(
        "Summarise the conversation turns below", SUMMARY, hold=release, arrived=arrived
    )
    request = Request(surface="cli", chat_id="c1", text=BOOK_CLUB, user_id="operator",
                      sender="operator")  # fmt: skip

    reply = await services.assistant.answer(request)

    assert reply.text == "Noted." and not arrived.is_set()  # answered, nothing distilled yet
    after = asyncio.ensure_future(services.assistant.after_reply(reply))
    assert await asyncio.to_thread(arrived.wait, 30)  # then the exchange distils the window
    release.set()
    await asyncio.wait_for(after, 60)
    window = services.window("cli", "c1", "operator")
    assert window.summary() == SUMMARY and window.tokens() < 1024 * 0.3
    # The exchange's trace holds both calls: the answer (tools offered), then the distillation.
    calls = services.traces.get(reply.trace_id).models
    assert [c["tools_offered"] for c in calls] == [True, False]


async def test_distillation_without_a_model_answer_keeps_a_plain_note(make_services, llm):
    services = make_services(MODEL_CONTEXT_TOKENS="1024")
    llm.enqueue("fake-lite", "Noted.", "Noted.", "Noted.", Reply(status=429), "A lemon tart.")
    for note in (OSLO, KITCHEN, BOOK_CLUB):
        await ask(services, note)

    reply = await ask(services, "What did I promise to bake for the book club?")

    assert reply.status == "answered"
    summary = services.window("cli", "c1", "operator").summary()
    assert summary == "3 earlier turns (2025-03-14 to 2025-03-14) are in session memory."
    assert f"> {summary}" in system_of(llm.requests_for("fake-lite")[-1])


async def test_the_older_turns_are_embedded_while_the_model_distils_them(make_services, llm):
    services = await two_notes(make_services, llm)
    arrived, saved = threading.Event(), threading.Event()
    # The distiller's answer waits for session memory, and session memory for the distiller's
    # request: done one after the other, the first wait would time out.
    llm.answer_when("Summarise the conversation turns below", SUMMARY, hold=saved, arrived=arrived)
    save, overlapped = services.session_memory.save_turns, []

    def save_once_the_model_is_asked(*args):
        overlapped.append(arrived.wait(30))
        try:
            return save(*args)
        finally:
            saved.set()

    services.session_memory.save_turns = save_once_the_model_is_asked

    reply = await asyncio.wait_for(ask(services, BOOK_CLUB), 120)

    assert overlapped == [True]
    assert reply.text == "Noted."
    assert services.window("cli", "c1", "operator").summary() == SUMMARY
    hits = services.session_memory.search(
        "operator", "c1", "conversation:c1", "When does the Oslo flight leave Lyon?"
    )
    assert any("7:40" in h.text for h in hits)


async def test_a_window_session_memory_cannot_take_stays_whole_and_the_answer_goes_on(
    make_services, llm
):
    from core.errors import StorageUnavailable

    services = make_services(MODEL_CONTEXT_TOKENS="1024")
    llm.enqueue("fake-lite", "Noted.", "Noted.", "Noted.", "A lemon tart.")
    llm.answer_when("Summarise the conversation turns below", SUMMARY)

    def locked(*args):
        raise StorageUnavailable("database is locked")

    services.session_memory.save_turns = locked
    for note in (OSLO, KITCHEN, BOOK_CLUB):  # the last one takes the window past its share
        await ask(services, note)
    window = services.window("cli", "c1", "operator")
    before = window.turns()
    assert len(before) == 6 and window.summary() is None  # not distilled after that reply...

    reply = await ask(services, "What did I promise to bake for the book club?")

    # ... nor before the next answer (tried again, it failed again), which goes on.
    assert reply.status == "answered" and reply.text == "A lemon tart."
    assert window.summary() is None  # not compacted: nothing of the older turns is lost
    assert window.turns()[: len(before)] == before
