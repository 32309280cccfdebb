"""THE composition root for a turn: framework-free, frames go to a sink.

`ChatHandler` wires the chat store, the teacher, the tools and the turn seams, and runs
one turn at a time per chat. Tests drive whole turns with a scripted model and a list as
the sink; the WebSocket route is just another caller.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

import anyio
import msgspec

from backend.agent.teacher import Teacher, create_teacher
from backend.agent.teacher_tools import create_teacher_tools
from backend.agent.tool_specs import decode_tool_args
from backend.core.errors import (
    Busy,
    HarnessError,
    ModelError,
    NotFound,
    PlanError,
    ToolError,
)
from backend.core.pending import find_tool_part, pending_question
from backend.core.ports import ChatModel, ChatStore, Clock, IdGen
from backend.core.questions import ask_user_view, grade, public_view, validate_spec
from backend.core.record_ops import (
    job_notices,
    undelivered_job_parts,
    update_tool_part,
    upsert_message,
)
from backend.core.views import chat_view, public_part
from backend.server import tracing, turn_service
from shared_contracts.chat import (
    UNTITLED,
    ChatRecord,
    ChatView,
    Message,
    Part,
    TextPart,
    ToolPart,
    title_from,
)
from shared_contracts.frames import (
    Answer,
    ErrorFrame,
    Plan,
    Question,
    ServerFrame,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnFinishReason,
    TurnStarted,
    UserMessage,
    VerdictFrame,
)
from shared_contracts.model_io import ModelDone, ModelToolCall, TextChunk
from shared_contracts.tools import (
    JOB_TOOLS,
    LEARNER_TOOLS,
    SERVER_TOOLS,
    AskUserArgs,
    GradedOutput,
    PlanOutput,
    QuizArgs,
    ReplyOutput,
)

log = logging.getLogger("harness.turn")

FrameSink = Callable[[ServerFrame], Awaitable[None]]
Opening = Callable[[ChatRecord, int, datetime], ChatRecord]
"""Adds a turn's input to the record in the write that opens turn `n` at `now`."""


class NoPendingQuestion(HarnessError):
    code = "no_pending_question"


@dataclass
class HandlerConfig:
    max_steps: int = 12
    offline: bool = True
    model_label: str = "offline"
    template: str | None = None
    """A teacher prompt template to use instead of the packaged one (replay experiments)."""


@dataclass
class _Turn:
    """The running turn's working state (the record on disk is the truth)."""

    chat_id: str
    turn_id: int
    sink: FrameSink
    assistant: Message
    partial: list[str] = field(default_factory=list)
    question_asked: bool = False
    may_be_silent: bool = False
    """A turn that only hands job results to the teacher may end without a word."""
    saved: Message | None = None
    """The assistant message as last persisted (a finish with nothing new writes nothing)."""


class ChatHandler:
    """Runs turns: one at a time per chat; every finish persists; seams never break a turn."""

    def __init__(
        self,
        *,
        chats: ChatStore,
        model: ChatModel,
        clock: Clock,
        ids: IdGen,
        seams: turn_service.TurnSeams,
        config: HandlerConfig | None = None,
        tracer: tracing.Tracer | None = None,
    ) -> None:
        self.trace = tracer or tracing.NO_TRACE
        self.chats = chats
        self.model = model
        self.clock = clock
        self.ids = ids
        self.seams = seams
        self.config = config or HandlerConfig()
        self._running: dict[str, anyio.CancelScope] = {}
        self._turns: dict[str, _Turn] = {}  # the running turn of each chat, once opened

    # -- chats ------------------------------------------------------------------------

    async def create_chat(self, title: str | None = None) -> ChatRecord:
        now = self.clock.now()
        record = ChatRecord(
            id=self.ids.new("chat"),
            title=(title or "").strip() or UNTITLED,
            created_at=now,
            updated_at=now,
            model=self.config.model_label,
        )
        await self.chats.create(record)
        await self.trace.chat_created(record)
        return record

    async def view(self, chat_id: str):
        record = await self.chats.get(chat_id)
        return chat_view(record, offline=self.config.offline, turn_running=self.is_running(chat_id))

    def live_view(self, chat_id: str) -> ChatView | None:
        """The chat as a socket opening now must see it, with no I/O and no await: its
        record as of the last completed write, with the running turn's message so far (its
        streamed text included); None when the record is not in memory. Taken in the same
        step as the socket's hub connection, the snapshot holds every `text_delta` sent
        before it and the connection every one after."""
        record = self.chats.peek(chat_id)
        if record is None:
            return None
        turn = self._turns.get(chat_id)
        if turn is not None:
            message = turn.assistant
            if turn.partial:
                message = _with_part(message, TextPart(text="".join(turn.partial)))
            if message.parts:
                record = upsert_message(record, message, record.updated_at)
        return chat_view(record, offline=self.config.offline, turn_running=self.is_running(chat_id))

    def is_running(self, chat_id: str) -> bool:
        return chat_id in self._running

    def abort(self, chat_id: str) -> bool:
        scope = self._running.get(chat_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    # -- turn entry points ------------------------------------------------------------

    def claim(self, chat_id: str) -> anyio.CancelScope:
        """Reserve the chat for a turn (synchronously: no await between check and insert)."""
        if chat_id in self._running:
            raise Busy("a turn is already running for this chat")
        scope = anyio.CancelScope()
        self._running[chat_id] = scope
        return scope

    async def user_message(
        self, chat_id: str, frame: UserMessage, sink: FrameSink, scope: anyio.CancelScope
    ) -> TurnFinishReason:
        def add_message(record: ChatRecord, turn_id: int, now: datetime) -> ChatRecord:
            message = Message(
                id=self.ids.new("msg"),
                role="user",
                turn=turn_id,
                created_at=now,
                parts=[TextPart(text=frame.text)],
            )
            updated = upsert_message(record, message, now)
            if record.title == UNTITLED:
                updated = msgspec.structs.replace(updated, title=title_from(frame.text))
            return updated

        return await self._run_turn(chat_id, sink, scope, _nothing, add_message)

    async def prepare_answer(self, chat_id: str, frame: Answer) -> ToolPart:
        """Grade (or record) an answer to the pending question; nothing is written yet.

        Raises `NoPendingQuestion` or `GradingError` (an answer of the wrong shape).
        """
        record = await self.chats.get(chat_id)
        pending = pending_question(record)
        if pending is None or pending.tool_call_id != frame.tool_call_id:
            raise NoPendingQuestion("there is no pending question with that tool_call_id")
        part = _find_part(record, frame.tool_call_id)
        if part.tool_name == "quiz":
            args = msgspec.convert(part.input, QuizArgs)
            verdict = grade(args.question, frame.answer)
            output: GradedOutput | ReplyOutput = GradedOutput(
                answer=frame.answer, confidence=frame.confidence, verdict=verdict
            )
        else:
            text = frame.answer if isinstance(frame.answer, str) else str(frame.answer)
            output = ReplyOutput(answer=text, confidence=frame.confidence)
        return msgspec.structs.replace(part, state="output-available", output=output)

    async def answer(
        self, chat_id: str, answered: ToolPart, sink: FrameSink, scope: anyio.CancelScope
    ) -> TurnFinishReason:
        """Continue the lesson with a prepared answer (see `prepare_answer`)."""

        async def start(turn: _Turn) -> None:
            await self._persist_answer(turn.chat_id, answered)
            await self.trace.quiz_graded(turn.chat_id, turn.turn_id, answered)
            if isinstance(answered.output, GradedOutput):
                v = answered.output.verdict
                await turn.sink(
                    VerdictFrame(
                        tool_call_id=answered.tool_call_id,
                        correct=v.correct,
                        expected=v.expected,
                        feedback=v.feedback,
                    )
                )
            await turn.sink(ToolResult(part=public_part(answered)))

        return await self._run_turn(chat_id, sink, scope, start)

    async def deliver_jobs(
        self, chat_id: str, sink: FrameSink, scope: anyio.CancelScope
    ) -> TurnFinishReason:
        """A turn that only hands finished background results to the teacher."""

        return await self._run_turn(chat_id, sink, scope, _nothing, may_be_silent=True)

    def release(self, chat_id: str, scope: anyio.CancelScope) -> None:
        if self._running.get(chat_id) is scope:
            del self._running[chat_id]

    # -- the loop ---------------------------------------------------------------------

    async def _run_turn(
        self,
        chat_id: str,
        sink: FrameSink,
        scope: anyio.CancelScope,
        start: Callable[[_Turn], Awaitable[None]],
        opening: Opening | None = None,
        *,
        may_be_silent: bool = False,
    ) -> TurnFinishReason:
        """`opening` edits the record in the write that opens the turn; `start` runs after
        it (its own writes, its frames). The chat stays pinned in the store's cache while
        the turn runs: it reads its record a dozen times, and decoding it each time cost
        more than the rest of the turn once chats grew long."""
        async with self.chats.pinned(chat_id):
            return await self._run_pinned_turn(chat_id, sink, scope, start, opening, may_be_silent)

    async def _run_pinned_turn(
        self,
        chat_id: str,
        sink: FrameSink,
        scope: anyio.CancelScope,
        start: Callable[[_Turn], Awaitable[None]],
        opening: Opening | None,
        may_be_silent: bool,
    ) -> TurnFinishReason:
        reason: TurnFinishReason = "error"
        turn: _Turn | None = None
        try:
            await self.trace.begin_turn(chat_id)
            # Opening a turn (its number, the learner's input) is not abortable: an abort
            # that arrives this early still finds the input saved and gets a turn_finished.
            with anyio.CancelScope(shield=True):
                notices: list[Part] = []
                record = await self.chats.update(chat_id, lambda r: self._open(r, opening, notices))
                turn = _Turn(
                    chat_id=chat_id,
                    turn_id=record.turns,
                    sink=sink,
                    assistant=Message(
                        id=self.ids.new("msg"),
                        role="assistant",
                        turn=record.turns,
                        created_at=self.clock.now(),
                    ),
                    may_be_silent=may_be_silent,
                )
                self._turns[chat_id] = turn
                await sink(TurnStarted(turn_id=turn.turn_id))
                if notices:
                    await self.trace.jobs_delivered(chat_id, turn.turn_id, notices)  # type: ignore[arg-type]
                await start(turn)
            with scope:
                context = await turn_service.build_teacher_context(self.seams, chat_id)
                teacher = create_teacher(self.model, context, self.config.template)
                await self.trace.prompt(chat_id, turn.turn_id, teacher.prompt)
                reason = await self._loop(turn, teacher)
            if scope.cancelled_caught:
                reason = "aborted"
        except ModelError as exc:
            reason = "error"
            log.warning("[chat %s] model call failed: %s", chat_id, exc)
            await _safe_send(sink, ErrorFrame(code="model_error", message=exc.public_message()))
        except HarnessError as exc:
            reason = "error"
            log.warning("[chat %s] turn ended with %s: %s", chat_id, type(exc).__name__, exc)
            await _safe_send(sink, ErrorFrame(code=_frame_code(exc), message=exc.public_message()))
        except Exception:
            reason = "error"
            log.exception("[chat %s] turn failed", chat_id)
            await _safe_send(sink, ErrorFrame(code="internal", message="the turn failed"))
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    if turn is not None:
                        await self._finish(turn, reason)
                finally:
                    if turn is not None and self._turns.get(chat_id) is turn:
                        del self._turns[chat_id]
                    self.release(chat_id, scope)
        if turn is not None:
            await turn_service.trigger_extraction(self.seams, chat_id)
        return reason

    async def _finish(self, turn: _Turn, reason: TurnFinishReason) -> None:
        """Every finish persists what the learner saw, aborts and errors included."""
        if turn.partial:
            turn.assistant = _with_part(turn.assistant, TextPart(text="".join(turn.partial)))
            turn.partial.clear()
        if turn.assistant.parts and turn.assistant is not turn.saved:
            try:
                await turn_service.persist_turn(self.seams, turn.chat_id, turn.assistant)
            except HarnessError as exc:
                reason = "error"
                log.warning("[chat %s] could not persist the turn: %s", turn.chat_id, exc)
                await _safe_send(
                    turn.sink, ErrorFrame(code="storage_error", message=exc.public_message())
                )
        await self.trace.checkpoint(turn.chat_id, turn.turn_id)
        await _safe_send(turn.sink, TurnFinished(turn_id=turn.turn_id, reason=reason))

    async def _loop(self, turn: _Turn, teacher: Teacher) -> TurnFinishReason:
        for _ in range(self.config.max_steps):
            await self.trace.step(turn.chat_id, turn.turn_id)
            record = await self.chats.get(turn.chat_id)
            record = upsert_message(record, turn.assistant, record.updated_at)
            done: ModelDone | None = None
            # Per streamed chunk: nothing but the delta (the message id is fixed meanwhile).
            keep, sink, message_id = turn.partial.append, turn.sink, turn.assistant.id
            push = _text_pusher(sink, message_id)
            async for event in teacher.stream(record):
                if isinstance(event, TextChunk) and event.text:
                    keep(event.text)
                    if push is not None:
                        push(event.text)
                    else:
                        await sink(TextDelta(message_id=message_id, delta=event.text))
                elif isinstance(event, ModelDone):
                    done = event
            if done is None:
                raise ModelError("the model stream ended without a final message")
            text = done.message.content or "".join(turn.partial)
            turn.partial.clear()
            if text:
                turn.assistant = _with_part(turn.assistant, TextPart(text=text))
            calls = done.message.tool_calls
            for call in calls:
                await self._tool_call(turn, call)
            saved = await turn_service.persist_turn(self.seams, turn.chat_id, turn.assistant)
            # the stored copy may be further along (a job already tagged or settled its part)
            turn.assistant = next(m for m in saved.messages if m.id == turn.assistant.id)
            turn.saved = turn.assistant
            await turn_service.spawn_turn_jobs(self.seams, turn.chat_id, turn.assistant)
            if turn.question_asked:
                return "awaiting_answer"
            if not calls:
                return await self._settle_ending(turn, done.finish_reason)
        await turn.sink(
            ErrorFrame(
                code="step_limit",
                message=f"the teacher took more than {self.config.max_steps} steps in one turn",
            )
        )
        return "error"

    async def _settle_ending(self, turn: _Turn, finish_reason: str) -> TurnFinishReason:
        """A last step that ended short, or said nothing at all, is told to the learner in
        a sentence (else a cut answer, or no answer, would look like the tutor's whole say)."""
        who = f"The tutor's model ({self.config.model_label})"
        notice = ""
        if finish_reason == "length":
            notice = f"{who} hit its length limit, so its answer is cut off. Ask it to go on."
        elif finish_reason == "content_filter":
            notice = f"{who} held back the rest of its answer (the provider's content filter)."
        elif not turn.may_be_silent and not any(_shown(p) for p in turn.assistant.parts):
            notice = f"{who} sent an empty reply. Send your message again."
        if not notice:
            return "stop"
        log.warning("[chat %s] the turn ended short: %s", turn.chat_id, finish_reason)
        await turn.sink(ErrorFrame(code="model_error", message=notice))
        return "error"

    async def _tool_call(self, turn: _Turn, call: ModelToolCall) -> None:
        raw_input = _raw_dict(call.arguments)
        part = ToolPart(
            tool_call_id=call.id,
            tool_name=call.name,
            state="input-available",
            input=raw_input,
        )
        try:
            args = decode_tool_args(call.name, call.arguments)
            if isinstance(args, QuizArgs):
                validate_spec(args.question)
        except ToolError as exc:
            await self._announce(turn, msgspec.structs.replace(part, input={}))
            await self._tool_error(turn, part, str(exc))
            return
        await self._announce(turn, part)
        if call.name in SERVER_TOOLS:
            tools = create_teacher_tools(turn.chat_id, self.chats)
            try:
                change = await tools.apply_plan(args)  # type: ignore[arg-type]
            except PlanError as exc:
                await self._tool_error(turn, part, str(exc))
                return
            done = msgspec.structs.replace(
                part, state="output-available", output=PlanOutput(tree=change.after)
            )
            await self.trace.tool_run(
                turn.chat_id, turn.turn_id, call.arguments, done, change.before, change.after
            )
            turn.assistant = _with_part(turn.assistant, done)
            await turn.sink(ToolResult(part=done))
            await turn.sink(Plan(tree=change.after))
        elif call.name in LEARNER_TOOLS:
            if turn.question_asked:
                await self._tool_error(
                    turn, part, "one question at a time: ask this after the learner answers"
                )
                return
            turn.question_asked = True
            turn.assistant = _with_part(turn.assistant, part)
            await self.trace.tool_run(turn.chat_id, turn.turn_id, call.arguments, part)
            if isinstance(args, QuizArgs):
                question = public_view(args.question, args.node_id)
            else:
                assert isinstance(args, AskUserArgs)
                question = ask_user_view(args)
            await turn.sink(Question(tool_call_id=call.id, question=question))
        elif call.name in JOB_TOOLS:
            turn.assistant = _with_part(turn.assistant, part)
            await self.trace.tool_run(turn.chat_id, turn.turn_id, call.arguments, part)

    async def _announce(self, turn: _Turn, part: ToolPart) -> None:
        await turn.sink(ToolCall(message_id=turn.assistant.id, part=public_part(part)))

    async def _tool_error(self, turn: _Turn, part: ToolPart, message: str) -> None:
        failed = msgspec.structs.replace(part, state="output-error", error=message[:2000])
        turn.assistant = _with_part(turn.assistant, failed)
        await self.trace.tool_run(turn.chat_id, turn.turn_id, _raw_text(part), failed)
        await turn.sink(ToolResult(part=public_part(failed)))
        log.info("[chat %s] tool %s rejected: %s", turn.chat_id, part.tool_name, message[:200])

    # -- persistence helpers ------------------------------------------------------------

    def _open(self, record: ChatRecord, opening: Opening | None, notices: list[Part]) -> ChatRecord:
        """The turn-opening write, all in one: the turn count, the learner's input (via
        `opening`), and a notice of the job results that arrived since the teacher last
        spoke (its parts are appended to `notices`)."""
        turn_id = record.turns + 1
        now = self.clock.now()
        record = msgspec.structs.replace(record, turns=turn_id, updated_at=now)
        if opening is not None:
            record = opening(record, turn_id, now)
        parts = undelivered_job_parts(record)
        if parts:
            message = Message(
                id=self.ids.new("msg"),
                role="user",
                turn=turn_id,
                created_at=now,
                parts=list(job_notices(parts)),
            )
            record = upsert_message(record, message, now)
            notices.extend(message.parts)
        return record

    async def _persist_answer(self, chat_id: str, part: ToolPart) -> ChatRecord:
        now = self.clock.now()

        def mutate(record: ChatRecord) -> ChatRecord:
            current = _find_part(record, part.tool_call_id)
            if current.state != "input-available":
                raise NoPendingQuestion("that question has already been answered")
            updated = update_tool_part(record, part, now)
            assert updated is not None
            return updated

        return await self.chats.update(chat_id, mutate)


async def _nothing(turn: _Turn) -> None:
    return None


def _find_part(record: ChatRecord, tool_call_id: str) -> ToolPart:
    found = find_tool_part(record, tool_call_id)
    if found is None:
        raise NotFound(f"tool call {tool_call_id!r} not found")
    return found[2]


def _with_part(message: Message, part: Part) -> Message:
    parts = list(message.parts)
    if isinstance(part, ToolPart):
        for index, existing in enumerate(parts):
            if isinstance(existing, ToolPart) and existing.tool_call_id == part.tool_call_id:
                parts[index] = part
                return msgspec.structs.replace(message, parts=parts)
    parts.append(part)
    return msgspec.structs.replace(message, parts=parts)


def _shown(part: Part) -> bool:
    """Whether the learner sees `part` in the conversation: text, an asked question, or a
    job card (a plan change shows only in the plan; a rejected call not at all)."""
    if isinstance(part, TextPart):
        return bool(part.text.strip())
    return (
        isinstance(part, ToolPart)
        and part.state != "output-error"
        and part.tool_name in LEARNER_TOOLS | JOB_TOOLS
    )


def _raw_dict(arguments: str) -> dict:
    try:
        value = msgspec.json.decode(arguments or "{}")
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _raw_text(part: ToolPart) -> str:
    return msgspec.json.encode(part.input).decode()


def _frame_code(exc: HarnessError) -> str:
    known = {
        "bad_frame",
        "busy",
        "not_found",
        "no_pending_question",
        "model_error",
        "storage_error",
    }
    return exc.code if exc.code in known else "internal"


def _text_pusher(sink: FrameSink, message_id: str) -> Callable[[str], None] | None:
    """The sink's plain per-delta call for `message_id`'s streamed text (the hub's sink
    has one, see `TurnSink.text_deltas`), else None: await the sink with each frame."""
    text_deltas = getattr(sink, "text_deltas", None)
    return text_deltas(message_id) if text_deltas is not None else None


async def _safe_send(sink: FrameSink, frame: ServerFrame) -> None:
    try:
        await sink(frame)
    except Exception:  # a closed socket must not hide the finish
        log.debug("sink refused %s", type(frame).__name__)
