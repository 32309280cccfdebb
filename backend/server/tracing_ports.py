"""The ports a tracer wraps: model, clock, ids, chat and graph stores, the extraction
pipeline and trace stores (recording, or answering from a replay's `Player`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from backend.core.errors import CorruptRecord, ModelError
from backend.core.ports import ChatModel, ChatStore, Clock, GraphStore, IdGen, LedgerCursor
from backend.server.tracing_core import (
    Scope,
    current_scope,
    request_hash,
    was_cancelled,
)
from shared_contracts.chat import ChatRecord
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
)
from shared_contracts.trace import (
    AnyTraceEvent,
    ClockEvent,
    ExtractionEvent,
    IdEvent,
    ModelCallEvent,
    TimedChunk,
)
from shared_contracts.trace_blobs import MissingBlob, expand_blobs, text_chunks

if TYPE_CHECKING:
    from backend.server.tracing import Tracer


class ExpandedTraces:
    """`TraceStore` whose `read` restores every interned text (`expand_blobs`); `raw` is
    the store as written. A ref to a text the trace never stored is a `CorruptRecord`.
    `before_read(chat_id)` (the recorder's flush) runs first, so a read sees every event
    recorded so far."""

    def __init__(
        self, raw: Any, before_read: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self.raw = raw
        self._before_read = before_read

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        await self.raw.append(chat_id, events)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        if self._before_read is not None:
            await self._before_read(chat_id)
        return read_expanded(await self.raw.read(chat_id), chat_id)


def read_expanded(events: list[AnyTraceEvent], chat_id: str) -> list[AnyTraceEvent]:
    """`expand_blobs(events)`, a broken ref raised as `CorruptRecord` (not a traceback)."""
    try:
        return expand_blobs(events)
    except (MissingBlob, ValueError, msgspec.DecodeError) as exc:
        raise CorruptRecord(f"trace of chat {chat_id}", str(exc)) from exc


class TraceSink:
    """`TraceStore` for code that records its own events: they join the current unit."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        scope = current_scope() or Scope.here(chat_id, "server")
        for event in events:
            if isinstance(event, ExtractionEvent):
                _, after = await self._tracer._graph_state()
                event = msgspec.structs.replace(event, graph_hash_after=after)
            await self._tracer.sync(scope, event)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        await self._tracer.flush(chat_id)
        return await self._tracer._traces.read(chat_id)  # type: ignore[union-attr]


class TracingClock:
    """Records each value in its unit; in a replay returns the recorded one."""

    def __init__(self, inner: Clock, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    def now(self) -> datetime:
        scope = current_scope()
        if scope is None:
            return self.inner.now()
        n = self.tracer.replay_count(scope, "clock")
        player = self.tracer.player
        value = None
        if player is not None and not player.live(scope.key):
            value = player.clock(scope.key, n)
        if value is None:
            value = self.inner.now()
        self.tracer.emit(scope.chat_id, ClockEvent(seq=0, scope=scope.key, value=value))
        return value


class TracingIds:
    """Records each id in its unit; in a replay returns the recorded one. A run id names
    its extraction unit (`extraction:<run>`)."""

    def __init__(self, inner: IdGen, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    def new(self, prefix: str) -> str:
        scope = current_scope()
        if scope is None:
            return self.inner.new(prefix)
        n = self.tracer.replay_count(scope, "id")
        player = self.tracer.player
        value = None
        if player is not None and not player.live(scope.key):
            value = player.id(scope.key, n, prefix)
        if value is None:
            value = self.inner.new(prefix)
        self.tracer.emit(scope.chat_id, IdEvent(seq=0, scope=scope.key, prefix=prefix, value=value))
        if prefix == "run" and scope.key == "extraction":
            scope.key = f"extraction:{value}"
        return value


class TracingModel:
    """A `ChatModel` that records every call under its structural key; in a replay it
    answers from the recording (strict: a different request is a divergence)."""

    def __init__(self, inner: ChatModel, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer
        self.name = getattr(inner, "name", "model")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        scope = current_scope()
        if scope is None:
            async for event in self.inner.stream(request):
                yield event
            return
        tracer = self.tracer
        key = f"{scope.key}/{request.role}#{tracer.count(scope, 'call:' + request.role)}"
        call = ModelCallEvent(
            seq=0,
            scope=scope.key,
            key=key,
            model=self.name,
            request=request,
            request_hash=request_hash(request),
        )
        player = tracer.player
        if player is not None and not player.live(scope.key):
            await player.stop(scope.key, call=key)  # a recorded shutdown stopped it before
            recorded = player.call(key, request)  # raises ReplayDivergence
            tracer.emit(scope.chat_id, msgspec.structs.replace(recorded, scope=scope.key))
            for event in replay_events(recorded):
                yield event
            if was_cancelled(recorded):
                # Recorded: cancelled while waiting for the next chunk. The replay holds
                # the call there until the cancellation (the replayed abort) lands.
                await player.cut(key)
            if recorded.error:
                raise ModelError(recorded.error)
            return
        timer = tracer._timer
        start = timer()
        # A text-only stream is kept as two lists (`text_chunks`), not a Struct per chunk;
        # the first tool-call chunk switches to `TimedChunk`s. A text chunk keeps the raw
        # timer reading; whole microseconds since `start` (then ms) are taken at the end.
        stamps: list[float] = []
        texts: list[str] = []
        at, keep = stamps.append, texts.append
        chunks: list[TimedChunk] | None = None
        emitted = False

        def emit() -> None:
            nonlocal call, emitted
            if emitted:
                return
            emitted = True
            if chunks is None:
                call = text_chunks(call, _ms_since(start, stamps), texts)
            else:
                call = msgspec.structs.replace(call, chunks=chunks)
            tracer.emit(scope.chat_id, call)

        try:
            async for event in self.inner.stream(request):
                if isinstance(event, TextChunk):
                    if chunks is None:
                        at(timer())
                        keep(event.text)
                    else:
                        t_ms = round((timer() - start) * 1e6) / 1000
                        chunks.append(TimedChunk(t_ms=t_ms, text=event.text))
                elif isinstance(event, ToolCallChunk):
                    if chunks is None:
                        pairs = zip(_ms_since(start, stamps), texts, strict=True)
                        chunks = [TimedChunk(t_ms=ms, text=x) for ms, x in pairs]
                    chunks.append(
                        TimedChunk(
                            t_ms=round((timer() - start) * 1e6) / 1000,
                            tool_index=event.index,
                            tool_id=event.id,
                            tool_name=event.name,
                            arguments=event.arguments,
                        )
                    )
                elif isinstance(event, ModelDone):
                    call = msgspec.structs.replace(
                        call,
                        response=event.message,
                        finish_reason=event.finish_reason,
                        usage=event.usage,
                    )
                    # Recorded now, not when the stream is closed: a caller that stops at
                    # the final message leaves it open until garbage collection, and its
                    # unit's next call would be recorded first (a replay records in order).
                    emit()
                yield event
        except anyio.get_cancelled_exc_class():
            call = msgspec.structs.replace(call, cancelled=True)
            raise
        except Exception as exc:
            call = msgspec.structs.replace(call, error=str(exc)[:2000] or type(exc).__name__)
            raise
        finally:
            emit()  # queued with the unit's other events: its end writes them


def _ms_since(start: float, stamps: list[float]) -> list[float]:
    """Timer readings as ms since `start`, in whole microseconds."""
    return [round((t - start) * 1e6) / 1000 for t in stamps]


def replay_events(call: ModelCallEvent) -> list[ModelEvent]:
    """The events a recorded call yielded: its chunks, then its `ModelDone` (if it had one)."""
    events: list[ModelEvent] = []
    for chunk in call.chunks:
        if chunk.tool_index is None:
            events.append(TextChunk(text=chunk.text))
        else:
            events.append(
                ToolCallChunk(
                    index=chunk.tool_index,
                    id=chunk.tool_id,
                    name=chunk.tool_name,
                    arguments=chunk.arguments,
                )
            )
    if call.response is not None:
        events.append(
            ModelDone(
                message=call.response,
                finish_reason=call.finish_reason or "stop",  # type: ignore[arg-type]
                usage=call.usage,
            )
        )
    return events


class TracingChatStore:
    """`ChatStore` whose reads and writes from a unit are recorded sync points."""

    def __init__(self, inner: ChatStore, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def create(self, record: ChatRecord) -> None:
        await self.inner.create(record)

    async def list_summaries(self):
        return await self.inner.list_summaries()

    def pinned(self, chat_id: str):
        return self.inner.pinned(chat_id)

    def held(self, chat_id: str):
        return self.inner.held(chat_id)

    def peek(self, chat_id: str) -> ChatRecord | None:
        return self.inner.peek(chat_id)  # memory only: no access to order

    async def get(self, chat_id: str) -> ChatRecord:
        return await self.tracer.accessed(chat_id, "read", self.inner.get, chat_id)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        return await self.tracer.accessed(chat_id, "write", self.inner.update, chat_id, mutate)


class TracingGraphStore:
    """`GraphStore` whose reads and appends from a unit are recorded sync points."""

    def __init__(self, inner: GraphStore, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def read_since(self, cursor: LedgerCursor):
        return await self.tracer.accessed(None, "graph_read", self.inner.read_since, cursor)

    async def append(self, batch) -> None:
        async with self.tracer.access(None, "graph_write"):
            try:
                await self.inner.append(batch)
            finally:
                self.tracer.graph_changed()


class ReplayJobStore:
    """`JobStore` of a replay: a job saving its `running` state is a point where a
    recorded shutdown may have stopped it (`Player.stop`); nothing is recorded."""

    def __init__(self, inner: Any, player: Any) -> None:
        self.inner = inner
        self.player = player

    async def save(self, job: Any) -> None:
        if job.status == "running":
            await self.player.stop(f"job:{job.id}", point="running")
        await self.inner.save(job)

    async def get(self, job_id: str) -> Any:
        return await self.inner.get(job_id)

    async def list_all(self) -> list[Any]:
        return await self.inner.list_all()


class TracingPipeline:
    """The extraction pipeline run as its own unit (`extraction:<run>`)."""

    def __init__(self, inner: Any, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def run(self, chat_id: str) -> Any:
        if not self.tracer.enabled:
            return await self.inner.run(chat_id)
        # The unit is named by the run id it draws (a run with nothing to do draws none).
        with self.tracer.enter(chat_id, "extraction") as scope:
            try:
                return await self.inner.run(chat_id)
            finally:
                self.tracer.unit_done(chat_id, scope.key)
