"""The assistant's one entry point: capture → classify → evidence pack → route → answer → trace.

Every surface (CLI, Telegram, cockpit) calls `Assistant.handle`; nothing here knows which one.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.archive.records import CaptureIn, CaptureResult, reply_message_id
from core.conversation import as_messages, needs_compaction
from core.errors import (
    EloraError,
    NoModelConfigured,
    ProviderError,
    SpendingCapReached,
    StorageUnavailable,
)
from core.ids import new_id
from core.offload import run_blocking
from core.prompts import render
from core.recall.classifier import Classification, classify, classify_request
from core.recall.pack import EvidencePack
from core.routing.client import CALLS
from core.routing.loop import Router, RouteResult, usage_totals
from core.routing.profile import dimension_of
from core.routing.tiers import HOW_TO_CONFIGURE, configured
from core.routing.tools import ToolBox, ToolContext

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.archive.store import Archive
    from core.clock import Clock
    from core.config import Settings
    from core.conversation import ConversationWindow
    from core.learning.engine import Learner
    from core.routing.client import ModelClient
    from core.routing.profile import CapabilityProfile
    from core.routing.spend import SpendGuard
    from core.traces import TraceStore

    Windows = Callable[[str, str, str | None], ConversationWindow]

log = logging.getLogger(__name__)

PROVIDER_DOWN = (
    "Sorry, I can't reach my language model right now ({detail}). Your message is saved; "
    "please try again in a moment."
)


@dataclass
class Request:
    """One incoming message, as any surface received it."""

    surface: str
    chat_id: str
    text: str
    user_id: str | None = None
    message_id: str | None = None
    sender: str | None = None
    sent_at: datetime | None = None
    private: bool = False
    extra_context: str | None = None  # e.g. a document register prepared by the surface
    # Whether the surface already holds this chat's next message (asked when learning: a
    # burst's exchanges then share one extraction call).
    more_waiting: Callable[[], bool] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class Unfinished:
    """An answered request's learning and trace, still to come after the reply is sent."""

    request: Request
    calls: list[dict[str, Any]]  # its model calls so far (learning's are added)
    elapsed: float  # seconds of pipeline work before the reply


@dataclass
class Reply:
    """The answer and everything a surface may want to show about it."""

    text: str
    status: str  # answered | no_model | provider_error | spending_cap | error
    trace_id: str | None = None
    capture_id: str | None = None
    classification: Classification | None = None
    pack: EvidencePack | None = None
    route: RouteResult | None = None
    start_tier: str | None = None
    gate: dict[str, Any] | None = None
    learning: dict[str, Any] = field(default_factory=dict)
    # Part of this exchange (message, answer or trace) waits in the spool for the database.
    spooled: bool = False
    # What Assistant.after_reply has left to do (None once done, or for a replayed answer).
    unfinished: Unfinished | None = field(default=None, repr=False, compare=False)

    def summary(self) -> dict[str, Any]:
        """Answer plus trace essentials as plain data (for `--json` and the cockpit)."""
        route = self.route
        return {
            "text": self.text,
            "status": self.status,
            "trace_id": self.trace_id,
            "capture_id": self.capture_id,
            "start_tier": self.start_tier,
            "final_tier": route.tier if route else None,
            "models": route.calls if route else [],
            "escalations": route.escalations if route else [],
            "tool_calls": route.tool_calls if route else [],
            "tokens_in": route.tokens_in if route else 0,
            "tokens_out": route.tokens_out if route else 0,
            "cost": route.cost if route else None,
            "classification": self.classification.to_json() if self.classification else None,
            "pack_items": self.pack.item_ids() if self.pack else [],
            "gate": self.gate,
            "learning": self.learning,
            "spooled": self.spooled,
        }


class Assistant:
    """Answers requests with bounded memory and the cheapest adequate model.

    It is handed each part it uses (core/services.py wires them): the archive, a chat's
    conversation window, the model client, recall (the evidence pack), the tools a model may
    call for this chat, the routing profile and spend guard, the learner and the traces."""

    def __init__(
        self,
        settings: Settings,
        clock: Clock,
        *,
        archive: Archive,
        windows: Windows,
        llm: ModelClient,
        recall: Callable[..., EvidencePack],
        tools: Callable[..., ToolBox],
        profile: CapabilityProfile,
        spend: SpendGuard,
        learner: Learner,
        traces: TraceStore,
    ):
        self.settings = settings
        self.clock = clock
        self.archive = archive
        self.windows = windows  # (surface, chat id, user id) -> that chat's window
        self.llm = llm
        self.recall = recall  # build_pack(question, **options) over this home's stores
        self.tools = tools  # ToolContext fields but the services -> the model's toolbox
        self.profile = profile
        self.spend = spend
        self.learner = learner
        self.traces = traces

    async def handle(self, request: Request) -> Reply:
        """Process one message end to end: `answer`, then `after_reply`."""
        return await self.after_reply(await self.answer(request))

    async def answer(self, request: Request) -> Reply:
        """Capture, classify, recall, route and archive the answer: everything the reply needs.
        Provider trouble becomes an honest short reply. The surface sends it, then calls
        `after_reply` (learning and the trace, whose id the reply already carries).

        Blocking work (SQLite, Chroma) runs off the event loop (core/offload.py) so a surface
        keeps serving other chats; the new messages' vectors are computed after the reply, by
        the background indexer, together with other chats'. An unwritable database never costs
        the answer: what could not be saved waits in the spool (`Reply.spooled`).
        """
        started = time.perf_counter()
        if not request.private and request.message_id:
            try:
                earlier = await run_blocking(self._earlier_answer, request)
            except StorageUnavailable:  # cannot tell: answer it (the capture will be spooled)
                earlier = None
            if earlier is not None:
                return earlier
        calls: list[dict[str, Any]] = []  # every model call of the exchange, for its trace
        calls_token = CALLS.set(calls)
        chunk_ids: list[str] = []  # this exchange's chunks, embedded after the reply
        try:
            capture_id = None
            spooled = False
            if not request.private:
                captured = await run_blocking(self._capture, request, "user", request.text)
                capture_id = captured.id
                spooled = captured.status == "spooled"
                chunk_ids.extend(captured.chunk_ids)
            llm = self.llm if configured(self.settings) else None
            classification = await self._classify(request.text, llm)
            pack = await self._recall(request, classification, capture_id)
            reply = Reply(text="", status="answered", capture_id=capture_id,
                          classification=classification, pack=pack, spooled=spooled)  # fmt: skip
            if llm is None:
                reply.text, reply.status = HOW_TO_CONFIGURE, "no_model"
            else:
                await self._answer(request, reply, llm)
            if reply.status == "answered" and not request.private:
                chunk_ids.extend(
                    await run_blocking(self._remember_turn, request, reply, reply.text)
                )
        finally:
            CALLS.reset(calls_token)
        if chunk_ids:
            # Only this exchange's chunks: an older backlog (e.g. after an embedder change) is
            # the index-pending job's work and must not hold up drain() or forget.
            self.archive.indexer.submit(chunk_ids)
        reply.trace_id = new_id()  # known to the surface before the trace is stored
        reply.unfinished = Unfinished(request, calls, time.perf_counter() - started)
        return reply

    async def after_reply(self, reply: Reply) -> Reply:
        """What comes once the answer is on its way (SPEC: after the reply): learn from the
        exchange, distil the window if it grew past its share (`_compact`), then store the
        exchange's trace, under the id the reply carries. Once per reply; a reply given before
        (a replay) has nothing left to do."""
        pending, reply.unfinished = reply.unfinished, None
        if pending is None:
            return reply
        resumed = time.perf_counter()
        calls_token = CALLS.set(pending.calls)
        try:
            reply.learning = await self._learn(pending.request, reply.capture_id, reply)
            await self._compact(pending.request, reply)
            # The trace's latency is the pipeline's work: without the time the surface took
            # to send the answer in between.
            started = resumed - pending.elapsed
            reply.trace_id = await run_blocking(
                self._trace, pending.request, reply, started, list(pending.calls)
            )
        finally:
            CALLS.reset(calls_token)
        return reply

    async def _compact(self, request: Request, reply: Reply) -> None:
        """Distil the window once the answer is out, if this exchange took it past its share of
        the model's context: the next message finds it short, and no answer waits for the
        distillation call (before an answer, a window is distilled only when it was not after
        the last one: a failed distillation, an exchange that ended before it)."""
        if request.private or reply.status != "answered" or reply.start_tier is None:
            return
        window = self.windows(request.surface, request.chat_id, request.user_id)
        share = self.settings.window_context_share
        try:
            await window.compact(self.llm.context_tokens(reply.start_tier), share, model=self.llm)
        except EloraError as exc:  # it stays as it is: the next exchange tries again
            log.warning("conversation window not distilled: %s", exc)

    def _earlier_answer(self, request: Request) -> Reply | None:
        """The answer this very message already got (a worker replaying it after another died
        sends that answer, archived and traced once, instead of asking the model again)."""
        found = self.archive.answer_to(request.surface, request.chat_id, str(request.message_id))
        if found is None:
            return None
        capture_id, text = found
        log.info("message %s was answered before: the same answer again", request.message_id)
        trace_id = self.traces.for_capture(capture_id)
        return Reply(text=text, status="answered", trace_id=trace_id, capture_id=capture_id)

    def _remember_turn(self, request: Request, reply: Reply, answer: str) -> list[str]:
        """Archive the answer and add both turns to the persisted conversation window; return
        the answer's new chunk ids."""
        reply_capture = self._capture(request, "assistant", answer)
        if reply_capture.status == "spooled":
            reply.spooled = True
        window = self.windows(request.surface, request.chat_id, request.user_id)
        try:
            window.extend(
                [("user", request.text, reply.capture_id), ("assistant", answer, reply_capture.id)]
            )
        except StorageUnavailable as exc:  # the archive (or its spool) has both turns
            log.info("conversation window not updated: %s", exc)
        return list(reply_capture.chunk_ids)

    async def drain(self) -> None:
        """Wait for work scheduled after replies (indexing the new messages)."""
        await run_blocking(self.archive.indexer.wait_idle)

    async def _classify(self, text: str, llm) -> Classification:
        """Heuristics, then the LITE model when unsure; a failing model leaves the heuristics."""
        now = self.clock.now()
        try:
            return await classify_request(text, now, model=llm)
        except EloraError as exc:
            log.warning("model classifier unavailable, heuristics decide: %s", exc)
            guess = classify(text, now)
            guess.reasons.append(f"model classifier unavailable ({type(exc).__name__})")
            return guess

    def _capture(self, request: Request, role: str, text: str) -> CaptureResult:
        item = CaptureIn(
            surface=request.surface,
            chat_id=request.chat_id,
            text=text,
            sent_at=request.sent_at or self.clock.now(),
            user_id=request.user_id if role == "user" else None,
            message_id=request.message_id
            if role == "user"
            else (reply_message_id(request.message_id) if request.message_id else None),
            sender=request.sender if role == "user" else "Elora",
            role=role,
            operator=role == "user" and self.settings.is_operator(request.user_id),
            provenance=request.provenance if role == "user" else {"reply_to": request.message_id},
        )
        # Indexed after the reply (see handle): the embedding is not on the answer's path.
        return self.archive.capture(item, index=False)

    async def _answer(self, request: Request, reply: Reply, llm) -> None:
        window = self.windows(request.surface, request.chat_id, request.user_id)
        gate, pro_allowed, turns, summary = await run_blocking(
            self._prepare, window, reply.classification
        )
        tier = gate.tier
        if tier == "PRO" and not pro_allowed:
            tier = "FLASH"
        reply.start_tier, reply.gate = tier, gate.to_json()
        router = None
        try:
            context, share = llm.context_tokens(tier), self.settings.window_context_share
            if needs_compaction(turns, summary, context, share):  # not done after the last reply
                await window.compact(context, share, model=llm)
                turns, summary = await run_blocking(window.load)
            messages, system_for = self._messages(request, reply.pack, turns, summary, tier)
            tools = self.tools(
                surface=request.surface, chat_id=request.chat_id, user_id=request.user_id,
                operator_text=request.text, capture_id=reply.capture_id, private=request.private,
            )  # fmt: skip
            router = Router(llm, tools, self.spend, self.settings.tool_call_budget)
            reply.route = await router.run(tier, messages, system_for)
            reply.text = reply.route.text
            if reply.route.escalations:
                await run_blocking(self._record_escalation, reply.classification)
        except SpendingCapReached as exc:
            reply.text, reply.status = f"Spending cap: {exc}.", "spending_cap"
        except NoModelConfigured as exc:
            reply.text, reply.status = str(exc), "no_model"
        except ProviderError as exc:
            detail = str(exc).split("(")[0].strip()
            reply.text, reply.status = PROVIDER_DOWN.format(detail=detail), "provider_error"
            log.warning("provider error: %s", exc)
        if reply.route is None and router is not None and router.result.calls:
            reply.route = router.result  # calls made before the failure are traced and paid

    def _prepare(self, window, classification: Classification):
        """The routing gate, whether PRO is affordable, and the window: one trip off the loop."""
        gate = self.profile.gate(classification)
        pro_allowed = gate.tier != "PRO" or self.spend.allows("PRO")
        return (gate, pro_allowed, *window.load())

    def _record_escalation(self, classification: Classification) -> None:
        try:
            self.profile.record(dimension_of(classification), "escalation")
        except StorageUnavailable as exc:  # a lost profile sample never costs the answer
            log.warning("escalation not recorded in the profile: %s", exc)

    async def _recall(
        self, request: Request, classification: Classification, capture_id: str | None
    ) -> EvidencePack:
        """The request's evidence pack; when building it fails (a locked database, a broken
        vector store, a bug), an empty pack that says so: the answer is not lost with it."""
        try:
            return await run_blocking(
                self.recall,
                request.text,
                chat_id=request.chat_id,
                user_id=request.user_id,
                classification=classification,
                exclude_capture_ids=[capture_id] if capture_id else None,
            )
        except Exception as exc:
            # The type only (the traceback at debug level): an error's text may quote what it
            # failed on, such as the question's words.
            log.error(
                "evidence pack failed (%s); answering without memory", type(exc).__name__,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )  # fmt: skip
            return EvidencePack.unavailable(
                request.text, classification, self.settings.pack_budget_tokens,
                chat_id=request.chat_id, user_id=request.user_id, now=self.clock.now(),
                why=f"recall failed ({type(exc).__name__}); nothing was recalled",
            )  # fmt: skip

    def _messages(
        self, request, pack: EvidencePack, turns: list[dict], summary: str | None, tier: str
    ):
        """The messages for the start tier, and how to render the system prompt for another
        tier (an escalation): the same evidence and summary, the model's own tier."""
        now = self.clock.now()
        evidence = render("evidence", pack=pack.to_json())

        def system_for(tier: str) -> str:
            return render(
                "system",
                operator_name=self.settings.operator_name,
                today=now.strftime("%A %d %B %Y"),
                tier=tier,
                tools=True,
                can_escalate=tier != "PRO",
                window_summary=summary,
                window_source=f"conversation:{request.chat_id}",
                evidence=evidence,
            )

        user = request.text
        if request.extra_context:
            user = f"{request.text}\n\n{request.extra_context}"
        messages = [{"role": "system", "content": system_for(tier)}, *as_messages(turns),
                    {"role": "user", "content": user}]  # fmt: skip
        return messages, system_for

    async def _learn(self, request: Request, capture_id: str | None, reply: Reply) -> dict:
        """Candidates from this exchange become proposals; a failure is reported, not hidden."""
        try:
            answer = reply.text if reply.status == "answered" else None
            report = await self.learner.after_exchange(
                request.text, capture_id, answer, private=request.private, speaker=request.sender,
                operator=self.settings.is_operator(request.user_id),
                chat=(request.surface, request.chat_id),
                defer=request.more_waiting is not None and request.more_waiting(),
            )  # fmt: skip
        except EloraError as exc:
            log.warning("learning failed for this exchange: %s", exc)
            return {"failure": f"learning failed: {exc}"}
        return report.to_json()

    def _trace(
        self, request: Request, reply: Reply, started: float, calls: list[dict[str, Any]]
    ) -> str | None:
        """Store the trace (or spool it); `calls` is every model call of the request (answer
        and auxiliary)."""
        route = reply.route
        traces = self.traces
        trace = traces.build(
            id=reply.trace_id,
            surface=request.surface,
            chat_id=request.chat_id,
            capture_id=reply.capture_id,
            classification=reply.classification.to_json() if reply.classification else {},
            pack={
                "items": reply.pack.item_ids() if reply.pack else [],
                "used": reply.pack.used if reply.pack else 0,
                "budget": reply.pack.budget if reply.pack else 0,
                "degraded": reply.pack.degraded if reply.pack else False,
                "cut": len(reply.pack.cut) if reply.pack else 0,
                # What recall missed is named with the message's own words: not kept
                # for a private chat or a "don't remember" message.
                "missing": reply.pack.missing
                if reply.pack and not request.private and not reply.learning.get("suppressed")
                else [],
                "gate": reply.gate,
                "start_tier": reply.start_tier,
            },
            models=calls,
            escalations=route.escalations if route else [],
            tool_calls=route.tool_calls if route else [],
            **usage_totals(calls),
            latency_ms=int((time.perf_counter() - started) * 1000),
            error=None if reply.status == "answered" else reply.status,
            learning=reply.learning,
        )
        try:
            return traces.store(trace).id
        except StorageUnavailable as exc:
            traces.spool(trace, reason=str(exc))
            reply.spooled = True
            return trace.id
        except EloraError as exc:  # the answer matters more than its trace
            log.warning("trace not stored: %s", exc)
            return None


def toolbox(context: ToolContext) -> ToolBox:
    """The tools a model may call for one chat's turn: memory's, and the council's (gated)."""
    from core.council.tools import council_allowed, council_tools

    tools = council_tools()
    gates = {name: council_allowed for name in ("consult_council", "delegate_to_subagent")}
    return ToolBox(context, extra=tools, gates=gates)
