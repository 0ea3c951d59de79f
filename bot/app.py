"""Build the Telegram Application: every handler registered here, in order; services and the
scheduler started in post_init and stopped in post_shutdown."""

from __future__ import annotations

import asyncio
import logging

from telegram import BotCommand, Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    MessageReactionHandler,
    TypeHandler,
    filters,
)

from bot.context import EloraContext
from bot.handlers import (
    access,
    commands,
    council,
    documents,
    errors,
    feedback,
    memory,
    messages,
    undo,
)
from bot.i18n import COMMANDS
from bot.processor import OrderedPerChat
from bot.remote import LendsWorkSlot
from core import app as elora
from core.app import workers
from core.offload import run_blocking

log = logging.getLogger(__name__)
SHUTDOWN_INDEXING = 30.0  # seconds the last chunks may take to embed at shutdown


def register(app: Application) -> None:
    """Every handler, in the order Telegram updates meet them."""
    # New messages only: an edited message would be answered (and archived, remembered) twice.
    new = filters.UpdateType.MESSAGE
    app.add_handler(TypeHandler(Update, access.guard), group=-1)
    for name, callback in (
        ("start", commands.start),
        ("help", commands.help_command),
        ("new", commands.new),
        ("remember", commands.remember_command),
        ("forget", memory.forget),
        ("topics", commands.topics),
        ("proposals", memory.proposals),
        ("council", council.council),
        ("private", commands.private),
        ("status", commands.status),
    ):
        app.add_handler(CommandHandler(name, callback, filters=new))
    app.add_handler(CallbackQueryHandler(memory.on_forget_button, pattern=r"^fg:"))
    app.add_handler(CallbackQueryHandler(memory.on_proposal_button, pattern=r"^pr:"))
    app.add_handler(CallbackQueryHandler(feedback.on_feedback_button, pattern=r"^fb:"))
    app.add_handler(CallbackQueryHandler(undo.on_undo_button, pattern=r"^un:"))
    app.add_handler(
        MessageReactionHandler(
            feedback.on_reaction,
            message_reaction_types=MessageReactionHandler.MESSAGE_REACTION_UPDATED,
        )
    )
    app.add_handler(MessageHandler(new & filters.Document.ALL, documents.on_document))
    app.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, messages.on_text))
    app.add_handler(MessageHandler(new & filters.COMMAND, commands.unknown))
    app.add_error_handler(errors.on_error)


async def _post_init(app: Application) -> None:
    for lang, entries in COMMANDS.items():
        commands_list = [BotCommand(name, description) for name, description in entries]
        await app.bot.set_my_commands(commands_list, language_code=None if lang == "en" else lang)
    services = app.bot_data["services"]
    # Load the slow parts now rather than on the first message (off the event loop).
    app.bot_data["warm_up"] = asyncio.ensure_future(run_blocking(elora.warm_up, services))
    if app.bot_data.get("scheduler_enabled", True):
        app.bot_data["scheduler"] = elora.start_scheduler(services)


async def _post_shutdown(app: Application) -> None:
    scheduler = app.bot_data.pop("scheduler", None)
    if scheduler is not None:
        scheduler.shutdown(wait=False)
    services = app.bot_data["services"]
    warm_up = app.bot_data.pop("warm_up", None)
    if warm_up is not None:
        await asyncio.gather(warm_up, return_exceptions=True)
    try:  # exchanges kept to be learned with a next message that never came
        await elora.flush_learning(services)
    except Exception as exc:  # the exchanges stay archived; `elora learn` can read them again
        log.warning("learning from the last messages failed at shutdown: %s", exc)
    # The last replies' chunks are embedded before the process goes (or stay pending).
    await run_blocking(elora.finish_indexing, services, SHUTDOWN_INDEXING)
    services.close()


def build_application(
    services, *, request=None, get_updates_request=None, scheduler: bool = True
) -> Application:
    """The configured Application (base URL from ELORA_TELEGRAM_BASE_URL when set).

    On PostgreSQL it is one of several workers: updates go through the shared queue
    (bot/workers.py); on SQLite it handles what it receives itself."""
    settings = services.settings
    builder: ApplicationBuilder = (
        Application.builder()
        .token(settings.telegram_bot_token.get_secret_value())
        .context_types(ContextTypes(context=EloraContext))
        .post_init(_post_init)
        .post_shutdown(_post_shutdown)
    )
    shared = None
    request = LendsWorkSlot(request)
    if workers.shares_updates(services):
        from bot.workers import AnswerJournal, SharedProcessor, SharedUpdates

        queue = workers.update_queue(services)
        shared = SharedUpdates(queue, settings.telegram_concurrent_chats)
        processor = SharedProcessor(services, shared, settings.work_slots)
        builder = builder.update_queue(shared).concurrent_updates(processor)
        request = AnswerJournal(queue, request)
    else:
        builder = builder.concurrent_updates(
            OrderedPerChat(services, settings.telegram_concurrent_chats, settings.work_slots)
        )
    if settings.telegram_base_url:
        base = settings.telegram_base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    builder = builder.request(request)
    if get_updates_request is not None:
        builder = builder.get_updates_request(get_updates_request)
    app = builder.build()
    if shared is not None:
        shared.bot = app.bot
    app.bot_data["services"] = services
    app.bot_data["scheduler_enabled"] = scheduler
    register(app)
    return app


def run(services) -> None:
    """Long polling by default; a webhook when ELORA_TELEGRAM_WEBHOOK_URL is set. On
    PostgreSQL, one worker among several (bot/workers.py: only the elected one polls)."""
    app = build_application(services)
    settings = services.settings
    if workers.shares_updates(services):
        import asyncio

        from bot.workers import serve

        asyncio.run(serve(app, services))
        return
    if settings.telegram_webhook_url:
        app.run_webhook(
            listen="0.0.0.0",
            port=settings.telegram_webhook_port,
            webhook_url=settings.telegram_webhook_url,
            allowed_updates=Update.ALL_TYPES,
        )
    else:
        app.run_polling(allowed_updates=Update.ALL_TYPES, drop_pending_updates=False)
