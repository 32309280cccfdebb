"""Recording hooks: chats, turns, steps, prompts, tools, quizzes, jobs, frames."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from backend.core.ports import ChatStore, SystemPrompt
from backend.server.tracing_core import (
    SCOPE_VAR,
    Scope,
    TranscriptHasher,
    contained,
    current_scope,
    digest,
    to_json,
    turn_of,
)
from shared_contracts.chat import ChatRecord, NoticePart, ToolPart
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    OutboundFrameEvent,
    PromptEvent,
    QuizEvent,
    ToolRunEvent,
)


class TraceHooks:
    """The recording hooks the server calls at its boundaries (mixed into `Tracer`, whose
    core supplies buffering, sync points and scopes)."""

    enabled: bool
    config: dict[str, str]
    _chats: ChatStore | None
    _counters: dict[tuple[str, str, str], int]
    _transcripts: TranscriptHasher
    _buffers: dict[str, list[Any]]
    _emitted: dict[str, int]
    player: Any

    def count(self, scope: Scope, kind: str) -> int: ...
    def unit_done(self, chat_id: str, key: str) -> None: ...
    def cut_after(self, chat_id: str, key: str) -> int: ...
    def emit(self, chat_id: str, event: AnyTraceEvent) -> None: ...
    def outbound_delta(self, chat_id: str, message_id: str, text: str) -> None: ...
    async def sync(
        self,
        scope: Scope,
        event: AnyTraceEvent | None = None,
        make: Callable[[], Awaitable[AnyTraceEvent]] | None = None,
    ) -> None: ...
    async def _graph_state(self) -> tuple[dict[str, int], str]: ...

    @contained
    async def chat_created(self, record: ChatRecord) -> None:
        if not self.enabled:
            return
        # Not flushed: a chat's trace starts with its first turn (an unused chat has none).
        counts, graph = await self._graph_state()
        event = MarkEvent(
            seq=0,
            scope="chat",
            mark="chat_created",
            title=record.title,
            at=record.created_at,
            config=self.config,
            graph_counts=counts,
            graph_hash=graph,
        )
        self.emit(record.id, event)

    @contained
    async def turn_opening(self, chat_id: str) -> None:
        """At a turn's start (before it draws any time or id): the unit `turn:<n>`."""
        if not self.enabled:
            return
        record = await self._chats.get(chat_id)  # type: ignore[union-attr]
        turn = record.turns + 1
        scope = Scope.here(chat_id, f"turn:{turn}")
        SCOPE_VAR.set(scope)

        async def make() -> MarkEvent:
            counts, graph = await self._graph_state()
            return MarkEvent(
                seq=0,
                mark="turn_started",
                turn=turn,
                config=self.config,
                graph_counts=counts,
                graph_hash=graph,
            )

        await self.sync(scope, make=make)

    @contained
    async def step_starting(self, chat_id: str, turn: int) -> None:
        """Before a teacher step reads the chat (replay orders job results against it)."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        n = self._counters.get((chat_id, scope.key, "step"), 0)
        self.count(scope, "step")
        await self.sync(scope, MarkEvent(seq=0, mark="step", turn=turn, step=n))

    @contained
    async def prompt_rendered(self, chat_id: str, turn: int, prompt: SystemPrompt) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        self.emit(
            chat_id,
            PromptEvent(
                seq=0,
                scope=scope.key,
                turn=turn,
                template_id=prompt.template_id,
                template_hash=prompt.template_hash,
                graph_context=prompt.graph_context,
                system_prompt=prompt.text,
            ),
        )

    @contained
    async def tool_ran(
        self,
        chat_id: str,
        turn: int,
        arguments: str,
        part: ToolPart,
        before: PlanTree | None = None,
        after: PlanTree | None = None,
    ) -> None:
        """A tool call's execution: raw args, whether they parsed, result or error, plan."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        self.emit(
            chat_id,
            ToolRunEvent(
                seq=0,
                scope=scope.key,
                turn=turn,
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
                raw_args=arguments,
                parsed=bool(part.input) or part.state != "output-error",
                output=to_json(part.output) if part.output is not None else "",
                error=part.error,
                plan_before=to_json(before) if before is not None else "",
                plan_after=to_json(after) if after is not None else "",
            ),
        )
        if part.tool_name in ("quiz", "ask_user_question") and part.state == "input-available":
            self.emit(chat_id, _quiz_event(scope.key, turn, part, "issued", to_json(part.input)))

    @contained
    async def answer_recorded(self, chat_id: str, turn: int, part: ToolPart) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        self.emit(chat_id, _quiz_event(scope.key, turn, part, "graded", to_json(part.output)))

    @contained
    async def jobs_delivered(self, chat_id: str, turn: int, notices: Sequence[NoticePart]) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        for notice in notices:
            event = JobTraceEvent(
                seq=0,
                job_id=notice.job_id or "",
                phase="delivered",
                turn=turn,
                before_call=f"turn:{turn}/teacher#0",
                detail=notice.tool_call_id or "",
            )
            await self.sync(scope, event)
            if notice.job_id:  # a delivered job has finished: it numbers nothing more
                self.unit_done(chat_id, f"job:{notice.job_id}")

    @contained
    async def turn_closed(self, chat_id: str, turn: int) -> None:
        """At a turn's end: hashes of the transcript, the plan tree and the graph, and the
        sync point after which the learner's abort cut the turn (if it landed at one)."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return

        cut = self.cut_after(chat_id, scope.key)

        async def make() -> CheckpointEvent:
            record = await self._chats.get(chat_id)  # type: ignore[union-attr]
            _, graph = await self._graph_state()
            return CheckpointEvent(
                seq=0,
                turn=turn,
                transcript_hash=self._transcripts.digest(chat_id, record.messages),
                plan_hash=digest(record.plan),
                graph_hash=graph,
                cut_after_sync=cut,
            )

        await self.sync(scope, make=make)
        # The turn's last model call and step are behind it (its ordinals may go).
        self.unit_done(chat_id, scope.key)

    # -- hooks: frames, jobs, extraction ------------------------------------------------

    @contained
    async def inbound(self, chat_id: str, raw: str | bytes, unit: str = "learner") -> None:
        """A learner frame as received (before decoding: bad frames are recorded too).

        The receiving task becomes the unit `unit` (its socket's, see
        `Tracer.learner_unit`; older traces: `learner`): what the frame then reads
        (an answer reads its question) is a sync point, and the turn it claims is claimed
        right after one (nothing awaits in between), so a replay orders it as recorded."""
        if not self.enabled:
            return
        scope = Scope.here(chat_id, unit)
        SCOPE_VAR.set(scope)
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

        async def make() -> InboundFrameEvent:
            try:
                turn = (await self._chats.get(chat_id)).turns  # type: ignore[union-attr]
            except Exception:
                turn = 0
            return InboundFrameEvent(seq=0, turn=turn, frame=text)

        await self.sync(scope, make=make)

    def outbound(self, chat_id: str, text: str) -> None:
        """A frame broadcast to the chat's clients (flushed with the next sync point)."""
        if not self.enabled:
            return
        scope = current_scope()
        key = scope.key if scope is not None and scope.chat_id == chat_id else "server"
        self.emit(chat_id, OutboundFrameEvent(seq=0, scope=key, turn=turn_of(key), frame=text))

    def text_deltas(self, chat_id: str, message_id: str) -> Callable[[str], None]:
        """`record(text)`: `outbound_delta(chat_id, message_id, text)` for a unit streaming
        one message's text, at the cost of an append while its run is the last thing
        queued for the chat (anything queued after it, or a flush, starts a new one).
        Only the unit that calls this may record with it: the run is known to be its own."""
        if not self.enabled:
            return _ignore
        run: object = None

        def record(text: str) -> None:
            nonlocal run
            queue = self._buffers.get(chat_id)
            if queue and queue[-1] is run:
                run.deltas.append(text)  # type: ignore[attr-defined]
                if self.player is not None:
                    self._emitted[chat_id] += 1
                return
            self.outbound_delta(chat_id, message_id, text)  # starts or joins the run
            run = self._buffers[chat_id][-1]

        return record

    async def job_starting(self, job: Any) -> None:
        """Replay only: a job about to queue for its slot. If its recording shows it
        cancelled before it started (the server shut down), it is held here until the
        replay's shutdown cancels it (nothing is recorded)."""
        if self.player is not None:
            await self.player.stop(f"job:{job.id}", point="start")

    async def job_submitted(self, chat_id: str, job_id: str, tool_call_id: str) -> None:
        await self.job(chat_id, job_id, "submitted", tool_call_id)

    async def job_finished(self, job: Job) -> None:
        await self.job(job.chat_id, job.id, "finished", msgspec.json.encode(job).decode())

    @contained
    async def job(self, chat_id: str, job_id: str, phase: str, detail: str = "") -> None:
        scope = current_scope()
        if not self.enabled:
            return
        if scope is None or scope.chat_id != chat_id:
            scope = Scope.here(chat_id, f"job:{job_id}")
        turn = turn_of(scope.key)
        event = JobTraceEvent(seq=0, job_id=job_id, phase=phase, turn=turn, detail=detail)  # type: ignore[arg-type]
        await self.sync(scope, event)


def _ignore(text: str) -> None:
    """A disabled tracer's `text_deltas` recorder."""


def _quiz_event(scope: str, turn: int, part: ToolPart, phase: str, detail: str) -> QuizEvent:
    """A question's trace event: issued (its input) or graded (its output)."""
    return QuizEvent(
        seq=0,
        scope=scope,
        turn=turn,
        tool_call_id=part.tool_call_id,
        phase=phase,  # type: ignore[arg-type]
        detail=detail,
    )
