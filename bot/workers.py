"""Several `elora bot` workers on one PostgreSQL: how updates reach them and who handles each.

Telegram lets one consumer poll a bot's updates. Every worker competes for a PostgreSQL
advisory lock; the one holding it polls (`Leadership`), the others wait, and when the
leader dies its database session ends, the lock is free and another worker starts polling
within a few seconds. With ELORA_TELEGRAM_WEBHOOK_URL every worker listens instead (behind a
load balancer). Either way a received update is first stored in the shared queue
(core/workers/updates.py): `SharedUpdates` is PTB's update queue, and its `put` returns only
once the update is committed, before the offset moves on (polling) or the webhook answers.

Every worker then takes work from the database: `SharedUpdates.get` claims the oldest
update of a chat no other worker holds, `SharedProcessor` runs PTB's handlers for it and
marks it done. A reply sent for an update (`AnswerJournal`, at the HTTP level, so every
handler is covered) is recorded as sent, so a replay after a crash closes the update
instead of answering twice. Workers wake each other with LISTEN/NOTIFY and also look every
second. SQLite homes keep the single-process path of bot/app.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import signal
import threading

from telegram import Update
from telegram.ext import BaseUpdateProcessor
from telegram.request import BaseRequest

from bot.remote import PassThrough
from core.app.workers import Leadership, Listener, UpdateQueue
from core.errors import StorageUnavailable
from core.offload import WorkSlots

log = logging.getLogger(__name__)

# The queue claim whose handlers are running (None outside one).
CURRENT = contextvars.ContextVar("elora_update_claim", default=None)
# Bot API methods that answer a user: once one succeeds, a replay must not answer again.
ANSWERS = ("send", "edit", "copyMessage", "forwardMessage")
NOT_ANSWERS = ("sendChatAction",)
LOOK_EVERY = 1.0  # seconds between looks at the queue when no notification came
LEADER_RETRY = 2.0  # seconds between attempts to become the poller


def chat_key(update: Update) -> str:
    """The chat an update belongs to (its updates are handled one at a time, in order)."""
    if update.effective_chat is not None:
        return str(update.effective_chat.id)
    if update.effective_user is not None:
        return f"user:{update.effective_user.id}"
    return "none"


class SharedUpdates(asyncio.Queue):
    """PTB's update queue, kept in the database: `put` stores, `get` claims."""

    def __init__(self, queue: UpdateQueue, capacity: int = 32):
        super().__init__()
        self.queue = queue
        self.capacity = capacity
        self.bot = None  # set by build_application: updates are rebuilt against it
        self.in_flight = 0
        self._wake: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._wake is None:
            self._wake = asyncio.Event()
        return self._wake

    def wake(self) -> None:
        """Look at the queue now (something arrived or finished)."""
        self._event().set()

    async def put(self, item: object) -> None:
        """Store an update (once committed, Telegram may forget it); other items stay local."""
        if isinstance(item, Update):
            while True:  # not stored, not acknowledged: Telegram keeps it until we can
                try:
                    await asyncio.to_thread(
                        self.queue.receive, item.update_id, chat_key(item), item.to_dict()
                    )
                    break
                except StorageUnavailable as exc:
                    log.warning("update %s not stored yet: %s", item.update_id, exc)
                    await asyncio.sleep(LOOK_EVERY)
            self.wake()
            return
        await super().put(item)  # PTB's stop signal
        self.wake()

    async def get(self) -> object:
        """The next update this worker should handle (claimed), or PTB's stop signal."""
        while True:
            if not super().empty():
                return await super().get()
            event = self._event()
            event.clear()  # before looking: a wake-up during the look is not lost
            if self.in_flight < self.capacity:
                try:
                    claimed = await asyncio.to_thread(self.queue.claim)
                except StorageUnavailable as exc:
                    log.warning("cannot claim updates now: %s", exc)
                    claimed = None
                if claimed is not None:
                    self.in_flight += 1
                    update = Update.de_json(claimed.payload, self.bot)
                    # Through the base queue, so PTB's task_done()/join() accounting holds.
                    super().put_nowait(update)
                    return super().get_nowait()
            await _wait(event, LOOK_EVERY)

    def finished(self) -> None:
        """One claimed update is done: room for another."""
        self.in_flight -= 1
        self.wake()


class SharedProcessor(BaseUpdateProcessor):
    """Runs a claimed update's handlers, then closes it in the queue; renews leases meanwhile
    and listens for other workers' notifications."""

    def __init__(self, services, updates: SharedUpdates, work_slots: int | None = None):
        super().__init__(updates.capacity)
        self.services = services
        self.updates = updates
        self.slots = WorkSlots(work_slots or updates.capacity)
        self._renewer: LeaseRenewer | None = None
        self._listener: Listener | None = None

    async def initialize(self) -> None:
        """Start renewing leases and listening for notifications."""
        loop = asyncio.get_running_loop()
        self._renewer = LeaseRenewer(self.updates.queue)
        self._renewer.start()
        self._listener = Listener(
            self.services, lambda: loop.call_soon_threadsafe(self.updates.wake)
        )
        self._listener.start()

    async def shutdown(self) -> None:
        """Stop renewing and listening."""
        if self._renewer is not None:
            self._renewer.stop()
            self._renewer = None
        if self._listener is not None:
            self._listener.stop()
            self._listener = None

    async def do_process_update(self, update: object, coroutine) -> None:
        """Handle one claimed update, then mark it done (whatever its handlers did)."""
        claim = update.update_id if isinstance(update, Update) else None
        token = CURRENT.set(claim)
        try:
            async with self.slots.slot():  # local work a few at a time (core/offload.py)
                await coroutine
        finally:
            CURRENT.reset(token)
            if claim is not None:
                try:
                    await asyncio.to_thread(self.updates.queue.complete, claim)
                except StorageUnavailable as exc:  # its lease runs out; a replay closes it
                    log.warning("update %s not marked done: %s", claim, exc)
                if claim % 500 == 0:
                    await asyncio.to_thread(self.updates.queue.prune)
                self.updates.finished()


class LeaseRenewer:
    """A thread renewing this worker's leases a few times per lease: on its own thread, so
    that a busy event loop (a slow import, a long handler) never lets a live worker's chat
    pass to another worker."""

    def __init__(self, queue: UpdateQueue):
        self.queue = queue
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="elora-leases", daemon=True)

    def start(self) -> None:
        """Start renewing."""
        self._thread.start()

    def stop(self) -> None:
        """Stop renewing (the leases then run out, unless completed first)."""
        self._stop.set()

    def _run(self) -> None:
        every = max(self.queue.lease_seconds / 3, 0.2)
        while not self._stop.wait(every):
            try:
                self.queue.renew()
            except Exception as exc:  # the database is away: leases may lapse, work is replayed
                log.warning("could not renew update leases: %s", exc)


class AnswerJournal(PassThrough):
    """The bot's HTTP requests, passed through; a successful answer to a user (a sent or
    edited message) is recorded on the update being handled."""

    def __init__(self, queue: UpdateQueue, inner: BaseRequest | None = None):
        super().__init__(inner)
        self.queue = queue

    async def do_request(self, url: str, method: str, request_data=None, **timeouts):
        """Send; when it answered a user, record it for the update being handled."""
        code, payload = await self.inner.do_request(url, method, request_data, **timeouts)
        endpoint = url.rsplit("/", 1)[-1]
        claim = CURRENT.get()
        if (
            claim is not None
            and 200 <= code < 300
            and endpoint.startswith(ANSWERS)
            and endpoint not in NOT_ANSWERS
        ):
            try:
                await asyncio.to_thread(self.queue.replied, claim)
            except StorageUnavailable as exc:
                log.warning("reply to update %s not recorded: %s", claim, exc)
        return code, payload


async def serve(app, services) -> None:
    """Run one worker until SIGTERM/SIGINT: handle claimed updates; poll while leader."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = services.settings
    await app.initialize()
    if app.post_init:
        await app.post_init(app)
    await app.start()
    try:
        if settings.telegram_webhook_url:
            await app.updater.start_webhook(
                listen="0.0.0.0",
                port=settings.telegram_webhook_port,
                webhook_url=settings.telegram_webhook_url,
                allowed_updates=Update.ALL_TYPES,
            )
            await stop.wait()
        else:
            await _poll_while_leader(app, services, stop)
    finally:
        if app.updater.running:
            await app.updater.stop()
        await app.stop()  # waits for the updates in hand to finish
        if app.post_shutdown:
            await app.post_shutdown(app)
        await app.shutdown()


async def _poll_while_leader(app, services, stop: asyncio.Event) -> None:
    leadership = Leadership(services)
    try:
        while not stop.is_set():
            try:
                leader = await asyncio.to_thread(leadership.try_acquire)
            except Exception as exc:  # the database is unreachable: try again in a while
                log.warning("cannot reach the database to elect a poller: %s", exc)
                leader = False
            if leader:
                log.info("this worker polls Telegram")
                await app.updater.start_polling(
                    allowed_updates=Update.ALL_TYPES, drop_pending_updates=False
                )
                while not stop.is_set() and await asyncio.to_thread(leadership.still_held):
                    await _wait(stop, LEADER_RETRY)
                await app.updater.stop()
            else:
                await _wait(stop, LEADER_RETRY)
    finally:
        leadership.release()


async def _wait(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
