"""What the server tells the recorder at its boundaries: chats, turns, steps, prompts,
tools, answers, jobs and learner frames (`core.ports.TurnObserver`, and the frames)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from backend.core.errors import HarnessError
from backend.core.ports import ChatStore, SystemPrompt
from backend.tracing.hashing import GraphHasher, TranscriptHasher, digest
from backend.tracing.player import Player
from backend.tracing.recorder import Recorder, contained
from backend.tracing.sync import SyncOrder
from backend.tracing.units import SCOPE_VAR, Scope, Units, current_scope, turn_of
from shared_contracts.chat import ChatRecord, NoticePart, ToolPart
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree
from shared_contracts.tools import GradedOutput, ReplyOutput
from shared_contracts.trace import (
    CheckpointEvent,
    InboundFrameEvent,
    JobPhase,
    JobTraceEvent,
    MarkEvent,
    PromptEvent,
    QuizEvent,
    ToolRunEvent,
)


class TraceHooks:
    """The recording hooks; each is a no-op when recording is off, and contained (a
    failure is logged, never raised)."""

    def __init__(
        self,
        recorder: Recorder,
        units: Units,
        order: SyncOrder,
        *,
        chats: ChatStore | None,
        graph: GraphHasher | None,
        config: Mapping[str, str],
        player: Player | None,
    ) -> None:
        self._recorder = recorder
        self._units = units
        self._order = order
        self._chats = chats
        self._graph = graph
        self.config = dict(config)
        self._player = player
        self.transcripts = TranscriptHasher()
        self.enabled = recorder.enabled and chats is not None

    async def graph_state(self) -> tuple[dict[str, int], str]:
        """The graph ledgers' line counts and hash now (nothing without a graph)."""
        if self._graph is None:
            return {}, ""
        return await self._graph.state()

    async def _turns(self, chat_id: str) -> int:
        assert self._chats is not None
        return (await self._chats.get(chat_id)).turns

    # -- chats and turns --------------------------------------------------------------

    @contained
    async def chat_created(self, record: ChatRecord) -> None:
        if not self.enabled:
            return
        # Not flushed: a chat's trace starts with its first turn (an unused chat has none).
        counts, graph = await self.graph_state()
        event = MarkEvent(
            seq=0,
            scope="chat",
            mark="chat_created",
            title=record.title,
            at=record.created_at,
            config=self.config,
            graph_counts=counts,
            graph_hash=graph,
            material_id=record.material_id,
        )
        self._recorder.emit(record.id, event)

    @contained
    async def turn_opening(self, chat_id: str) -> None:
        """At a turn's start (before it draws any time or id): the unit `turn:<n>`."""
        if not self.enabled:
            return
        turn = await self._turns(chat_id) + 1
        scope = Scope.here(chat_id, f"turn:{turn}")
        SCOPE_VAR.set(scope)

        async def make() -> MarkEvent:
            counts, graph = await self.graph_state()
            return MarkEvent(
                seq=0,
                mark="turn_started",
                turn=turn,
                config=self.config,
                graph_counts=counts,
                graph_hash=graph,
            )

        await self._order.sync(scope, make=make)

    @contained
    async def step_starting(self, chat_id: str, turn: int) -> None:
        """Before a teacher step reads the chat (replay orders job results against it)."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        n = self._units.count(scope, "step")
        await self._order.sync(scope, MarkEvent(seq=0, mark="step", turn=turn, step=n))

    @contained
    async def prompt_rendered(self, chat_id: str, turn: int, prompt: SystemPrompt) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        self._recorder.emit(
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
        self._recorder.emit(
            chat_id,
            ToolRunEvent(
                seq=0,
                scope=scope.key,
                turn=turn,
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
                raw_args=arguments,
                parsed=bool(part.input) or part.state != "output-error",
                error=part.error,
                result=part.output,
                tree_before=before,
                tree_after=after,
            ),
        )
        if part.tool_name in ("quiz", "ask_user_question") and part.state == "input-available":
            issued = QuizEvent(
                seq=0,
                scope=scope.key,
                turn=turn,
                tool_call_id=part.tool_call_id,
                phase="issued",
                input=part.input,
            )
            self._recorder.emit(chat_id, issued)

    @contained
    async def answer_recorded(self, chat_id: str, turn: int, part: ToolPart) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        output = part.output
        if not isinstance(output, GradedOutput | ReplyOutput):
            return  # an answer is graded or a reply: nothing else is recorded as one
        graded = QuizEvent(
            seq=0,
            scope=scope.key,
            turn=turn,
            tool_call_id=part.tool_call_id,
            phase="graded",
            output=output,
        )
        self._recorder.emit(chat_id, graded)

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
                tool_call_id=notice.tool_call_id or "",
            )
            await self._order.sync(scope, event)
            if notice.job_id:  # a delivered job has finished: it numbers nothing more
                self._units.unit_done(chat_id, f"job:{notice.job_id}")

    @contained
    async def turn_closed(self, chat_id: str, turn: int) -> None:
        """At a turn's end: hashes of the transcript, the plan tree and the graph, and the
        sync point after which the learner's abort cut the turn (if it landed at one)."""
        scope = current_scope()
        if not self.enabled or scope is None or self._chats is None:
            return
        cut = self._units.cut_after(chat_id, scope.key)
        chats = self._chats

        async def make() -> CheckpointEvent:
            record = await chats.get(chat_id)
            _, graph = await self.graph_state()
            return CheckpointEvent(
                seq=0,
                turn=turn,
                transcript_hash=self.transcripts.digest(chat_id, record.messages),
                plan_hash=digest(record.plan),
                graph_hash=graph,
                cut_after_sync=cut,
            )

        await self._order.sync(scope, make=make)
        # The turn's last model call and step are behind it (its ordinals may go).
        self._units.unit_done(chat_id, scope.key)

    # -- learner frames and jobs ------------------------------------------------------

    @contained
    async def inbound(self, chat_id: str, raw: str | bytes, unit: str = "learner") -> None:
        """A learner frame as received (before decoding: bad frames are recorded too).

        The receiving task becomes the unit `unit` (its socket's, see
        `Units.learner_unit`; older traces: `learner`): what the frame then reads
        (an answer reads its question) is a sync point, and the turn it claims is claimed
        right after one (nothing awaits in between), so a replay orders it as recorded."""
        if not self.enabled:
            return
        scope = Scope.here(chat_id, unit)
        SCOPE_VAR.set(scope)
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

        async def make() -> InboundFrameEvent:
            try:
                turn = await self._turns(chat_id)
            except (HarnessError, OSError):  # no chat to read (the frame is refused): turn 0
                turn = 0
            return InboundFrameEvent(seq=0, turn=turn, frame=text)

        await self._order.sync(scope, make=make)

    async def job_starting(self, job: Job) -> None:
        """Replay only: a job about to queue for its slot. If its recording shows it
        cancelled before it started (the server shut down), it is held here until the
        replay's shutdown cancels it (nothing is recorded)."""
        if self._player is not None:
            await self._player.stop(f"job:{job.id}", point="start")

    async def job_submitted(self, chat_id: str, job_id: str, tool_call_id: str) -> None:
        await self._job(chat_id, job_id, "submitted", tool_call_id=tool_call_id)

    async def job_finished(self, job: Job) -> None:
        await self._job(job.chat_id, job.id, "finished", job=job)

    @contained
    async def _job(
        self,
        chat_id: str,
        job_id: str,
        phase: JobPhase,
        *,
        tool_call_id: str = "",
        job: Job | None = None,
    ) -> None:
        scope = current_scope()
        if not self.enabled:
            return
        if scope is None or scope.chat_id != chat_id:
            scope = Scope.here(chat_id, f"job:{job_id}")
        event = JobTraceEvent(
            seq=0,
            job_id=job_id,
            phase=phase,
            turn=turn_of(scope.key),
            tool_call_id=tool_call_id,
            job=job,
        )
        await self._order.sync(scope, event)
