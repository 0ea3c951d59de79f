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
- operations: import, learn, jobs, reindex, the Markdown mirror, the council and skills
"""

from core.app.chat import (
    add_document,
    already_handled,
    ask,
    drain,
    feedback,
    feedback_on_reply,
    is_private,
    mark_handled,
    new_conversation,
    note_reply,
    set_private,
)
from core.app.health import audit, daily_activity, health, recent_traces, record_trace, status
from core.app.home import finish_indexing, open_services, start_scheduler, warm_up
from core.app.memory import (
    SOON_DAYS,
    EntryDetails,
    Lifetime,
    MemoryPage,
    browse_memory,
    context,
    entry_details,
    evidence_prompt,
    fading_schedule,
    fading_soon,
    find_memory,
    forget,
    forget_matching,
    forget_preview,
    get_memory,
    memory_lifetime,
    remember,
    render_pack_text,
    restore_memory,
    search_archive,
    search_memory,
    topics_for,
)
from core.app.operations import (
    DEFAULT_ROUNDS,
    council,
    count_unlearned,
    export_mirror,
    forge_skill,
    get_job,
    get_skill,
    import_mirror,
    jobs,
    learn,
    list_skills,
    prepare_import,
    reindex,
    run_import,
    run_job,
)
from core.app.review import (
    OPEN,
    ProposalView,
    count_proposals,
    get_proposal,
    proposal_json,
    proposal_view,
    propose,
    review_queue,
)
from core.doctor import Check, Report
from core.documents import DocumentRegister
from core.learning.review import approve, approve_recommended, reject, restore
from core.memory.api import Remembered, entry_json
from core.memory.forget import ForgetReport, source_capture_ids
from core.pipeline import Reply, Request
from core.routing.tools import DATA_NOTE

__all__ = [
    "DATA_NOTE",
    "DEFAULT_ROUNDS",
    "OPEN",
    "SOON_DAYS",
    "Check",
    "DocumentRegister",
    "EntryDetails",
    "ForgetReport",
    "Lifetime",
    "MemoryPage",
    "ProposalView",
    "Remembered",
    "Reply",
    "Report",
    "Request",
    "add_document",
    "already_handled",
    "approve",
    "approve_recommended",
    "ask",
    "audit",
    "browse_memory",
    "context",
    "council",
    "count_proposals",
    "count_unlearned",
    "daily_activity",
    "drain",
    "entry_details",
    "entry_json",
    "evidence_prompt",
    "export_mirror",
    "fading_schedule",
    "fading_soon",
    "feedback",
    "feedback_on_reply",
    "find_memory",
    "finish_indexing",
    "forge_skill",
    "forget",
    "forget_matching",
    "forget_preview",
    "get_job",
    "get_memory",
    "get_proposal",
    "get_skill",
    "health",
    "import_mirror",
    "is_private",
    "jobs",
    "learn",
    "list_skills",
    "mark_handled",
    "memory_lifetime",
    "new_conversation",
    "note_reply",
    "open_services",
    "prepare_import",
    "proposal_json",
    "proposal_view",
    "propose",
    "recent_traces",
    "record_trace",
    "reindex",
    "reject",
    "remember",
    "render_pack_text",
    "restore",
    "restore_memory",
    "review_queue",
    "run_import",
    "run_job",
    "search_archive",
    "search_memory",
    "set_private",
    "source_capture_ids",
    "start_scheduler",
    "status",
    "topics_for",
    "warm_up",
]
