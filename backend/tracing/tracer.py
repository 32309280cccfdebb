"""The `Tracer`: the recorder's public face. It implements `core.ports.TurnObserver`
(`hooks`), wraps the ports (`ports`, `model`), and forgets idle chats (`sweep`).

Built from its parts: the queue (`recorder`), the book of units (`units`), sync points
(`sync`) and the hooks (`hooks`). Disabled (every hook a no-op, no port wrapped) when
built without a trace store and a chat store.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio

from backend.core.ports import (
    ChatModel,
    ChatStore,
    Clock,
    GraphStore,
    IdGen,
    JobStore,
    SystemPrompt,
    TraceStore,
)
from backend.tracing.hashing import GraphHasher
from backend.tracing.hooks import TraceHooks
from backend.tracing.model import TracingModel
from backend.tracing.player import Player
from backend.tracing.ports import (
    ExpandedTraces,
    Pipeline,
    R_co,
    ReplayJobStore,
    TraceSink,
    TracingChatStore,
    TracingClock,
    TracingGraphStore,
    TracingIds,
    TracingPipeline,
)
from backend.tracing.recorder import Recorder
from backend.tracing.sync import LockOrdered, SyncOrder
from backend.tracing.units import END_SESSION, SCOPE_VAR, Units
from shared_contracts.chat import ChatRecord, NoticePart, ToolPart
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree

log = logging.getLogger("harness.trace")

SWEEP_S = 30.0
"""How often the app's recorder forgets idle chats (`Tracer.sweep`)."""


class Tracer:
    """Records a chat's trace (or, with a `player`, replays one)."""

    def __init__(
        self,
        traces: TraceStore | None = None,
        chats: ChatStore | None = None,
        graph: GraphStore | None = None,
        *,
        player: Player | None = None,
        timer: Callable[[], float] = time.perf_counter,
        config: Mapping[str, str] | None = None,
    ) -> None:
        self.enabled = traces is not None and chats is not None
        raw = traces.raw if isinstance(traces, ExpandedTraces) else traces
        self.player = player
        self.recorder = Recorder(raw if self.enabled else None, replaying=player is not None)
        self.units = Units(replaying=player is not None)
        self.order = SyncOrder(self.recorder, self.units, player)
        self._graph = GraphHasher(graph) if graph is not None else None
        self.hooks = TraceHooks(
            self.recorder,
            self.units,
            self.order,
            chats=chats,
            graph=self._graph,
            config=config or {},
            player=player,
        )
        self._timer = timer
        # The hub's per-frame calls go straight to the queue.
        self.outbound = self.recorder.outbound
        self.outbound_delta = self.recorder.outbound_delta
        self.text_deltas = self.recorder.text_deltas
        self.flush_all = self.recorder.flush_all
        self.emitted = self.recorder.emitted

    @property
    def config(self) -> dict[str, str]:
        return self.hooks.config

    # -- TurnObserver ---------------------------------------------------------------

    async def flush(self, chat_id: str) -> None:
        """Write the chat's queued events (see `Recorder.flush`)."""
        await self.recorder.flush(chat_id)

    async def chat_created(self, record: ChatRecord) -> None:
        await self.hooks.chat_created(record)

    async def turn_opening(self, chat_id: str) -> None:
        await self.hooks.turn_opening(chat_id)

    async def jobs_delivered(self, chat_id: str, turn: int, notices: Sequence[NoticePart]) -> None:
        await self.hooks.jobs_delivered(chat_id, turn, notices)

    async def answer_recorded(self, chat_id: str, turn: int, part: ToolPart) -> None:
        await self.hooks.answer_recorded(chat_id, turn, part)

    async def prompt_rendered(self, chat_id: str, turn: int, prompt: SystemPrompt) -> None:
        await self.hooks.prompt_rendered(chat_id, turn, prompt)

    async def step_starting(self, chat_id: str, turn: int) -> None:
        await self.hooks.step_starting(chat_id, turn)

    async def tool_ran(
        self,
        chat_id: str,
        turn: int,
        arguments: str,
        part: ToolPart,
        before: PlanTree | None = None,
        after: PlanTree | None = None,
    ) -> None:
        await self.hooks.tool_ran(chat_id, turn, arguments, part, before, after)

    async def turn_closed(self, chat_id: str, turn: int) -> None:
        await self.hooks.turn_closed(chat_id, turn)

    async def job_submitted(self, chat_id: str, job_id: str, tool_call_id: str) -> None:
        await self.hooks.job_submitted(chat_id, job_id, tool_call_id)

    async def job_finished(self, job: Job) -> None:
        await self.hooks.job_finished(job)

    # -- learner actions --------------------------------------------------------------

    def learner_unit(self, chat_id: str, socket: object) -> str:
        """See `Units.learner_unit` (a disabled tracer: `learner`)."""
        return self.units.learner_unit(chat_id, socket) if self.enabled else "learner"

    async def inbound(self, chat_id: str, raw: str | bytes, unit: str = "learner") -> None:
        await self.hooks.inbound(chat_id, raw, unit)

    @asynccontextmanager
    async def session_end(self, chat_id: str, unit: str = "") -> AsyncIterator[None]:
        """Around the session-end request (the extraction flush, an HTTP request): it is
        recorded as the learner frame `END_SESSION` of its own unit — `unit` (a replay names
        the recorded one) or the chat's next `end:<n>` — and what it reads inside is that
        unit's sync points, so a replay re-issues it where it was recorded. The calling
        task's unit is restored on exit (a task it starts inside keeps the request's)."""
        if not self.enabled:
            yield
            return
        unit = unit or self.units.end_unit(chat_id)
        token = SCOPE_VAR.set(None)
        # While the request runs its unit holds a counter: `sweep` keeps the chat's entries
        # (its numbering), so no later request is named as this one.
        self.units.counters[(chat_id, unit, "request")] = 1
        try:
            await self.hooks.inbound(chat_id, END_SESSION, unit)
            yield
        finally:
            SCOPE_VAR.reset(token)
            self.units.counters.pop((chat_id, unit, "request"), None)
            self.units.unit_done(chat_id, unit)

    async def job_starting(self, job: Job) -> None:
        """Replay only: see `TraceHooks.job_starting`."""
        await self.hooks.job_starting(job)

    def order_before_lock(self, view: LockOrdered) -> None:
        self.order.order_before_lock(view)

    # -- port wrappers ----------------------------------------------------------------

    def model(self, inner: ChatModel) -> ChatModel:
        if not self.enabled:
            return inner
        return TracingModel(inner, self.recorder, self.units, self.player, self._timer)

    def clock(self, inner: Clock) -> Clock:
        if not self.enabled:
            return inner
        return TracingClock(inner, self.recorder, self.units, self.player)

    def ids(self, inner: IdGen) -> IdGen:
        return TracingIds(inner, self.recorder, self.units, self.player) if self.enabled else inner

    def chat_store(self, inner: ChatStore) -> ChatStore:
        """Chat reads and writes from a unit become recorded sync points."""
        return TracingChatStore(inner, self.order) if self.enabled else inner

    def graph_store(self, inner: GraphStore) -> GraphStore:
        """Graph reads and appends from a unit become recorded sync points."""
        if not self.enabled:
            return inner
        if self._graph is not None:
            self._graph.watch(inner)
        changed = self._graph.changed if self._graph is not None else _nothing
        return TracingGraphStore(inner, self.order, changed)

    def job_store(self, inner: JobStore) -> JobStore:
        if not self.enabled or self.player is None:
            return inner
        return ReplayJobStore(inner, self.player)

    def trace_reader(self, inner: TraceStore) -> ExpandedTraces:
        """Traces read with full text (so the trace route shows whole requests); a reader
        sees every event emitted so far (sync points are queued, not written)."""
        if isinstance(inner, ExpandedTraces):
            return inner
        return ExpandedTraces(inner, before_read=self.recorder.settle if self.enabled else None)

    def trace_store(self) -> TraceSink:
        """A `TraceStore` for the extraction pipeline's own event (sequenced through us)."""
        return TraceSink(self.recorder, self.order, self.hooks.graph_state)

    def pipeline(self, inner: Pipeline[R_co]) -> TracingPipeline[R_co]:
        """The extraction pipeline, each run its own unit."""
        return TracingPipeline(inner, self.units, enabled=self.enabled)

    # -- forgetting idle chats --------------------------------------------------------

    async def sweep(self) -> int:
        """Forget the per-chat entries (write and state locks, socket numbering, sequence,
        interning and transcript-hashing state) of every idle chat: no open socket, no unit
        mid-way (none numbering calls or steps), nothing queued once its events are written,
        no write or state access in flight. Returns how many chats were forgotten. A chat
        that comes back starts afresh: its next write reads its trace for the next seq, its
        next socket is `learner:0` again (every earlier one has closed: they never overlap),
        its next session-end request `end:0` (none was in flight: each holds a counter).
        A replay keeps everything (it is short-lived and counts what it emits)."""
        if not self.enabled or self.player is not None:
            return 0
        known = (
            self.recorder.chats()
            | self.order.chats()
            | self.units.chats()
            | set(self.hooks.transcripts.chat_ids())
        )
        forgotten = 0
        for chat_id in known - self.units.open_chats() - self.units.running_chats():
            await self.recorder.settle(chat_id)  # what is queued is written (or waits)
            if self._forget(chat_id):
                forgotten += 1
        return forgotten

    async def sweep_forever(self, every_s: float = SWEEP_S) -> None:
        """`sweep` every `every_s` seconds, for the app's lifetime (a disabled tracer or a
        replay returns at once); a failure is logged, never raised."""
        if not self.enabled or self.player is not None:
            return
        while True:
            await anyio.sleep(every_s)
            try:
                await self.sweep()
            except Exception as exc:
                log.warning("[trace] sweep failed: %s", exc)

    def _forget(self, chat_id: str) -> bool:
        """Drop an idle chat's entries, unless something began meanwhile (a unit, a
        queued event, a write or an access holding or awaiting a lock)."""
        if not (self.recorder.idle(chat_id) and self.order.idle(chat_id)):
            return False
        if chat_id in self.units.running_chats():
            return False
        self.recorder.forget(chat_id)
        self.order.forget(chat_id)
        self.units.forget(chat_id)
        self.hooks.transcripts.forget(chat_id)
        return True

    def chat_entries(self) -> int:
        """How many per-chat entries the tracer keeps (pruned by `sweep`)."""
        held = len(self.hooks.transcripts.chat_ids())
        return self.recorder.entries() + self.order.entries() + self.units.entries() + held

    def counters(self) -> int:
        """How many counters are kept (a recording's stay bounded by its running units)."""
        return len(self.units.counters)


def _nothing() -> None:
    """No graph hasher to tell."""


NO_TRACE = Tracer()
"""The disabled tracer (turns and hubs built without one)."""
