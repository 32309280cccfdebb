"""The ports a tracer wraps: clock, ids, chat, graph and job stores, the extraction
pipeline and trace stores (recording, or answering from a replay's `Player`). The model:
`model.TracingModel`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Generic, Protocol, TypeVar

import msgspec

from backend.core.errors import CorruptRecord
from backend.core.ports import (
    ChatStore,
    Clock,
    GraphStore,
    IdGen,
    JobStore,
    LedgerBatch,
    LedgerCursor,
    TraceStore,
)
from backend.tracing.player import Player
from backend.tracing.recorder import Recorder
from backend.tracing.sync import SyncOrder
from backend.tracing.units import Scope, Units, current_scope, entered
from shared_contracts.chat import ChatRecord, ChatSummary
from shared_contracts.jobs import Job
from shared_contracts.trace import AnyTraceEvent, ClockEvent, ExtractionEvent, IdEvent
from shared_contracts.trace_blobs import MissingBlob, expand_blobs

R_co = TypeVar("R_co", covariant=True)


def read_expanded(events: list[AnyTraceEvent], chat_id: str) -> list[AnyTraceEvent]:
    """`expand_blobs(events)`, a broken ref raised as `CorruptRecord` (not a traceback)."""
    try:
        return expand_blobs(events)
    except (MissingBlob, ValueError, msgspec.DecodeError) as exc:
        raise CorruptRecord(f"trace of chat {chat_id}", str(exc)) from exc


class ExpandedTraces:
    """`TraceStore` whose `read` restores every interned text (`expand_blobs`); `raw` is
    the store as written. A ref to a text the trace never stored is a `CorruptRecord`.
    `before_read(chat_id)` (the recorder's flush) runs first, so a read sees every event
    recorded so far."""

    def __init__(
        self, raw: TraceStore, before_read: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self.raw = raw
        self._before_read = before_read

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        await self.raw.append(chat_id, events)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        if self._before_read is not None:
            await self._before_read(chat_id)
        return read_expanded(await self.raw.read(chat_id), chat_id)

    async def read_stored(self, chat_id: str) -> list[AnyTraceEvent]:
        """The events as written (texts interned, as a replay and an archive hold them),
        after the same flush as `read`."""
        if self._before_read is not None:
            await self._before_read(chat_id)
        return await self.raw.read(chat_id)


class TraceSink:
    """`TraceStore` for code that records its own events: they join the current unit."""

    def __init__(
        self,
        recorder: Recorder,
        order: SyncOrder,
        graph_state: Callable[[], Awaitable[tuple[dict[str, int], str]]],
    ) -> None:
        self._recorder = recorder
        self._order = order
        self._graph_state = graph_state

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        scope = current_scope() or Scope.here(chat_id, "server")
        for event in events:
            if isinstance(event, ExtractionEvent):
                _, after = await self._graph_state()
                event = msgspec.structs.replace(event, graph_hash_after=after)
            await self._order.sync(scope, event)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        await self._recorder.flush(chat_id)
        assert self._recorder.traces is not None
        return await self._recorder.traces.read(chat_id)


class TracingClock:
    """Records each value in its unit; in a replay returns the recorded one."""

    def __init__(self, inner: Clock, recorder: Recorder, units: Units, player: Player | None):
        self.inner = inner
        self._recorder = recorder
        self._units = units
        self._player = player

    def now(self) -> datetime:
        scope = current_scope()
        if scope is None:
            return self.inner.now()
        n = self._units.replay_count(scope, "clock")
        player = self._player
        value = None
        if player is not None and not player.live(scope.key):
            value = player.clock(scope.key, n)
        if value is None:
            value = self.inner.now()
        self._recorder.emit(scope.chat_id, ClockEvent(seq=0, scope=scope.key, value=value))
        return value


class TracingIds:
    """Records each id in its unit; in a replay returns the recorded one. A run id names
    its extraction unit (`extraction:<run>`)."""

    def __init__(self, inner: IdGen, recorder: Recorder, units: Units, player: Player | None):
        self.inner = inner
        self._recorder = recorder
        self._units = units
        self._player = player

    def new(self, prefix: str) -> str:
        scope = current_scope()
        if scope is None:
            return self.inner.new(prefix)
        n = self._units.replay_count(scope, "id")
        player = self._player
        value = None
        if player is not None and not player.live(scope.key):
            value = player.id(scope.key, n, prefix)
        if value is None:
            value = self.inner.new(prefix)
        event = IdEvent(seq=0, scope=scope.key, prefix=prefix, value=value)
        self._recorder.emit(scope.chat_id, event)
        if prefix == "run" and scope.key == "extraction":
            scope.key = f"extraction:{value}"
        return value


class TracingChatStore:
    """`ChatStore` whose reads and writes from a unit are recorded sync points."""

    def __init__(self, inner: ChatStore, order: SyncOrder) -> None:
        self.inner = inner
        self._order = order

    async def create(self, record: ChatRecord) -> None:
        await self.inner.create(record)

    async def list_summaries(self) -> list[ChatSummary]:
        return await self.inner.list_summaries()

    def pinned(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self.inner.pinned(chat_id)

    def held(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self.inner.held(chat_id)

    def peek(self, chat_id: str) -> ChatRecord | None:
        return self.inner.peek(chat_id)  # memory only: no access to order

    async def get(self, chat_id: str) -> ChatRecord:
        return await self._order.accessed(chat_id, "read", self.inner.get, chat_id)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        return await self._order.accessed(chat_id, "write", self.inner.update, chat_id, mutate)


class TracingGraphStore:
    """`GraphStore` whose reads and appends from a unit are recorded sync points."""

    def __init__(self, inner: GraphStore, order: SyncOrder, changed: Callable[[], None]) -> None:
        self.inner = inner
        self._order = order
        self._changed = changed

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        return await self._order.accessed(None, "graph_read", self.inner.read_since, cursor)

    async def append(self, batch: LedgerBatch) -> None:
        async with self._order.access(None, "graph_write"):
            try:
                await self.inner.append(batch)
            finally:
                self._changed()


class ReplayJobStore:
    """`JobStore` of a replay: a job saving its `running` state is a point where a
    recorded shutdown may have stopped it (`Player.stop`); nothing is recorded."""

    def __init__(self, inner: JobStore, player: Player) -> None:
        self.inner = inner
        self.player = player

    async def save(self, job: Job) -> None:
        if job.status == "running":
            await self.player.stop(f"job:{job.id}", point="running")
        await self.inner.save(job)

    async def get(self, job_id: str) -> Job:
        return await self.inner.get(job_id)

    async def list_all(self) -> list[Job]:
        return await self.inner.list_all()

    async def unfinished(self) -> list[Job]:
        return await self.inner.unfinished()


class Pipeline(Protocol[R_co]):
    """The extraction pipeline as a tracer sees it: one run per call."""

    async def run(self, chat_id: str) -> R_co: ...


class TracingPipeline(Generic[R_co]):
    """The extraction pipeline run as its own unit (`extraction:<run>`)."""

    def __init__(self, inner: Pipeline[R_co], units: Units, *, enabled: bool) -> None:
        self.inner = inner
        self._units = units
        self._enabled = enabled

    async def run(self, chat_id: str) -> R_co:
        if not self._enabled:
            return await self.inner.run(chat_id)
        # The unit is named by the run id it draws (a run with nothing to do draws none).
        with entered(chat_id, "extraction") as scope:
            try:
                return await self.inner.run(chat_id)
            finally:
                self._units.unit_done(chat_id, scope.key)
