"""The front door: every use case the surfaces offer (Telegram, the cockpit, the command line,
MCP), as plain functions taking the services, so that a rule lives in one place.

Surfaces import this package (`from core import app`), the errors (core.errors), the settings
(core.config, core.services) and the words they show (core.memory.vocabulary); never a store,
a table or a helper of the core (tests/test_layout.py walks their imports). A new use case is a
function in one of these modules, exported here:

- home: open_services, start_scheduler
- chat: ask, drain, add_document, new_conversation, private mode, replies and feedback
- memory: remember, find and browse entries, topics, what fades and restoring it, forget
  (preview, by id, by phrase),
  the evidence pack (context), memory and archive search
- review: the proposal queue and its decisions
- health: status, health (doctor), audit, traces and spend
- undo: who acts (acting), undo, undoable actions, an entry's versions and restoring one
- operations: import, learn, jobs, reindex, the Markdown mirror, the council and skills
"""

from __future__ import annotations

import importlib
from typing import Any

# Two exports bear their module's name: bound now, since importing core.app.health or
# core.app.undo (from anywhere) sets the package's attribute of that name to the module.
from core.app.health import health as health
from core.app.undo import undo as undo

# Where each export lives, imported on first use: a one-shot command (`elora context`,
# `elora remember`) pays for the modules it calls, not for the pipeline, the bot's chat
# code and every store (about a second of a fresh process).
_EXPORTS = {
    "add_document": "core.app.chat",
    "after_reply": "core.app.chat",
    "already_handled": "core.app.chat",
    "answer": "core.app.chat",
    "ask": "core.app.chat",
    "drain": "core.app.chat",
    "feedback": "core.app.chat",
    "feedback_on_reply": "core.app.chat",
    "flush_learning": "core.app.chat",
    "fresh_chat_id": "core.app.chat",
    "is_private": "core.app.chat",
    "mark_handled": "core.app.chat",
    "new_conversation": "core.app.chat",
    "note_reply": "core.app.chat",
    "set_private": "core.app.chat",
    "audit": "core.app.health",
    "daily_activity": "core.app.health",
    "health": "core.app.health",
    "recent_traces": "core.app.health",
    "record_trace": "core.app.health",
    "spent_today": "core.app.health",
    "status": "core.app.health",
    "trace_rows": "core.app.health",
    "finish_indexing": "core.app.home",
    "open_services": "core.app.home",
    "start_scheduler": "core.app.home",
    "warm_up": "core.app.home",
    "EntryDetails": "core.app.memory",
    "Lifetime": "core.app.memory",
    "MemoryPage": "core.app.memory",
    "SEARCH_FLOOR": "core.app.memory",
    "SOON_DAYS": "core.app.memory",
    "browse_memory": "core.app.memory",
    "context": "core.app.memory",
    "entry_details": "core.app.memory",
    "evidence_prompt": "core.app.memory",
    "fading_schedule": "core.app.memory",
    "fading_soon": "core.app.memory",
    "find_memory": "core.app.memory",
    "forget": "core.app.memory",
    "forget_matching": "core.app.memory",
    "forget_preview": "core.app.memory",
    "get_memory": "core.app.memory",
    "memory_lifetime": "core.app.memory",
    "remember": "core.app.memory",
    "render_pack_text": "core.app.memory",
    "restore_memory": "core.app.memory",
    "search_archive": "core.app.memory",
    "search_memory": "core.app.memory",
    "search_ranked": "core.app.memory",
    "topics_for": "core.app.memory",
    "DEFAULT_ROUNDS": "core.app.operations",
    "council": "core.app.operations",
    "count_unlearned": "core.app.operations",
    "export_mirror": "core.app.operations",
    "forge_skill": "core.app.operations",
    "get_job": "core.app.operations",
    "get_skill": "core.app.operations",
    "import_mirror": "core.app.operations",
    "index_facts": "core.app.operations",
    "jobs": "core.app.operations",
    "learn": "core.app.operations",
    "list_skills": "core.app.operations",
    "migrate_store": "core.app.operations",
    "prepare_import": "core.app.operations",
    "reindex": "core.app.operations",
    "run_import": "core.app.operations",
    "run_job": "core.app.operations",
    "OPEN": "core.app.review",
    "ProposalView": "core.app.review",
    "count_proposals": "core.app.review",
    "get_proposal": "core.app.review",
    "proposal_json": "core.app.review",
    "proposal_view": "core.app.review",
    "propose": "core.app.review",
    "review_queue": "core.app.review",
    "Acting": "core.app.undo",
    "Action": "core.app.undo",
    "EntryHistory": "core.app.undo",
    "Undone": "core.app.undo",
    "Version": "core.app.undo",
    "acting": "core.app.undo",
    "entry_history": "core.app.undo",
    "entry_versions": "core.app.undo",
    "restore_version": "core.app.undo",
    "undo": "core.app.undo",
    "undo_note": "core.app.undo",
    "undoable_actions": "core.app.undo",
    "Check": "core.doctor",
    "Report": "core.doctor",
    "DocumentRegister": "core.documents",
    "approve": "core.learning.review",
    "approve_recommended": "core.learning.review",
    "reject": "core.learning.review",
    "restore": "core.learning.review",
    "Remembered": "core.memory.api",
    "entry_json": "core.memory.api",
    "ForgetReport": "core.memory.forget",
    "source_capture_ids": "core.memory.forget",
    "Reply": "core.pipeline",
    "Request": "core.pipeline",
    "DATA_NOTE": "core.routing.tools",
    "escalation_path": "core.traces",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """An export, from its module (imported now if it was not yet)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
