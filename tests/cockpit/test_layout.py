"""Keyboard-first at 80x24: every screen renders with its footer of keys, `?` opens the help,
and no database, embedding or model call ever runs on the UI thread."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Footer

from cockpit.app import Cockpit
from cockpit.widgets.dialogs import HelpScreen
from tests.cockpit.support import add_proposal, entry, screen_lines, settle

SCREENS = [
    ("f1", "proposals", "a Approve"),
    ("f2", "memory", "/ Search"),
    ("f3", "chat", "esc Leave input"),
    ("f4", "traces", "? Help"),
    ("f5", "health", "? Help"),
    ("f6", "council", "^g Convene"),
]


def _seed(services) -> None:
    add_proposal(services, "p-1", "Camille dislikes coriander and says so often", total=4.5,
                 status="recommended")  # fmt: skip
    services.memory.save(entry("pref.coriander", "Camille dislikes coriander", kind="preference"))
    services.traces.record(surface="telegram", chat_id="42", classification={"intent": "task"},
                           cost=0.002, latency_ms=800)  # fmt: skip


@pytest.mark.parametrize(("key", "mode", "hint"), SCREENS, ids=[s[1] for s in SCREENS])
async def test_every_screen_fits_80x24_with_its_footer(services, cockpit, key, mode, hint):
    _seed(services)
    app = cockpit()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(key)
        await settle(pilot)

        assert app.is_running and app.current_mode == mode
        footer = app.screen.query_one(Footer)
        assert footer.region.y == 23 and footer.region.width == 80
        lines = screen_lines(app)
        assert len(lines) == 24
        assert hint in lines[-1]
        assert "Screens" in lines[-1]


async def test_question_mark_opens_the_help_and_it_scrolls_to_the_end_at_80x24(services, cockpit):
    app = cockpit()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert any("a approve" in line for line in screen_lines(app))

        await pilot.press("end")
        await settle(pilot)
        assert any("? this help · q quit" in line for line in screen_lines(app))

        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


class ThreadSpyEmbedder:
    """The real embedder, noting which thread asked."""

    def __init__(self, real, threads: list[str]):
        self.real, self.threads = real, threads
        self.name, self.dim = real.name, real.dim

    def embed_query(self, text):
        self.threads.append(threading.current_thread().name)
        return self.real.embed_query(text)

    def embed_passages(self, texts):
        self.threads.append(threading.current_thread().name)
        return self.real.embed_passages(texts)

    def calibrate(self, similarity, kind="query"):
        return self.real.calibrate(similarity, kind)


async def test_no_store_or_model_call_runs_on_the_ui_thread(settings, embedder, clock, llm):
    from core.config import load_settings
    from core.services import Services

    threads: list[str] = []
    services = Services(load_settings(), clock=clock, embedder=ThreadSpyEmbedder(embedder, threads))
    _seed(services)
    opened = services.db.session
    services.db.session = lambda *a, **k: (threads.append(threading.current_thread().name),
                                           opened(*a, **k))[1]  # fmt: skip
    complete = services.llm.complete

    async def traced_complete(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return await complete(*args, **kwargs)

    services.llm.complete = traced_complete
    threads.clear()  # the seeding above ran here on purpose
    app = Cockpit(services, refresh_seconds=None)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            ui = threading.current_thread().name
            await settle(pilot)
            await pilot.press("a")  # approve
            await settle(pilot)
            await pilot.press("2", "slash", *"coriander", "enter", "s")  # both searches
            await settle(pilot)
            await pilot.press("f", "y")  # forget
            await settle(pilot)
            await pilot.press("3", *"Hello Elora", "enter")  # a chat turn: pack, model, trace
            await settle(pilot)
            await pilot.press("f4")
            await settle(pilot)
            await pilot.press("5")
            await settle(pilot)
    finally:
        services.close()

    assert "elora-core" in threads  # the model was called, from the core loop
    assert len(threads) > 20
    assert ui not in threads
