"""The session recorder: every boundary of a chat into `traces/<chat_id>.jsonl`.

Attribution: a contextvar holds the running unit (a `Scope`: `turn:3`, `job:<id>`,
`extraction:<run>`), set when a turn, job or extraction run starts; a job's task is known
by its anyio task name (`job:<id>`). Model calls get structural keys
(`turn:7/teacher#0`, `job:<id>/researcher#2`, `extraction:<run>/extractor#0`), clock and id
values an ordinal within their unit, so concurrent units still match on replay.

Events get their `seq` when flushed, in emission order. Sync points — turn/step marks,
every chat-record and graph read or write made by a unit (recorded under a per-chat state
lock, so trace order is the order units saw the shared state), job and extraction events,
checkpoints, learner frames — are what a replay orders units by: its `Player` supplies
recorded values and holds each sync point until everything recorded before it in other
units has happened (see `backend.server.replay`). A hook failure is logged, never raised.
A sync point is written before it passes, so a unit never yields between a sync point and
what it does next; decisions on state the trace does not see (the chat's turn slot: claim,
release) are taken right after one and so replay in recorded order. The task receiving
learner frames is the `learner` unit.

Nothing secret is recorded: requests are our own `ModelRequest` (no keys, no headers).
Large repeated text is written once per chat trace by content hash (`flush` interns it,
see `shared_contracts.trace_blobs`); `ExpandedTraces` is the store readers see, full text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import anyio
import msgspec

from backend.core.errors import CorruptRecord, ModelError
from backend.core.ports import ChatModel, ChatStore, Clock, GraphStore, IdGen, LedgerCursor
from shared_contracts.chat import ChatRecord, NoticePart, ToolPart
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
)
from shared_contracts.plan import PlanTree
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    ExtractionEvent,
    IdEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    QuizEvent,
    TimedChunk,
    ToolRunEvent,
)
from shared_contracts.trace_blobs import Interner, MissingBlob, expand_blobs

log = logging.getLogger("harness.trace")
CANONICAL = msgspec.json.Encoder(order="sorted")
LEDGERS = ("propositions", "edges", "events", "mappings", "sessions", "audit")
SYNC_TYPES = (
    MarkEvent,
    JobTraceEvent,
    ExtractionEvent,
    CheckpointEvent,
    InboundFrameEvent,
)
"""Events replay uses to order concurrent units (every other event is ordered by its unit)."""
MAX_INTERNED_CHATS = 128
"""Chats whose trace-interning state stays in memory between flushes."""


def is_sync(event: AnyTraceEvent) -> bool:
    """Whether `event` is a sync point (recorded through `Tracer.sync`)."""
    if isinstance(event, MarkEvent):
        return event.mark != "chat_created"
    return isinstance(event, SYNC_TYPES)


def digest(value: object) -> str:
    """sha256 (32 hex) of the canonical (sorted-keys) msgspec JSON of `value`."""
    return hashlib.sha256(CANONICAL.encode(value)).hexdigest()[:32]


def request_hash(request: ModelRequest) -> str:
    return digest(request)


def contained(hook):
    """A recording hook never breaks the lesson: a failure is logged, never raised."""

    @functools.wraps(hook)
    async def run(self, *args, **kwargs):
        try:
            return await hook(self, *args, **kwargs)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            log.warning("[trace] %s failed: %s", hook.__name__, exc)

    return run


class ReplayDivergence(ModelError):
    """A replayed model call the recording cannot answer (ends the turn like a model error)."""


@dataclass
class Scope:
    """One unit of work in one chat; `task` is the id of the task that owns it.

    `owner` keeps that task object alive while the scope exists: a task id is the task's
    address, and once a task is freed a new task (a job) may get the same id and would be
    taken for the old unit — a rare, real misattribution that made replays diverge.
    """

    chat_id: str
    key: str
    task: int
    owner: object = dataclasses.field(default=None, repr=False, compare=False)


_SCOPE: ContextVar[Scope | None] = ContextVar("harness_trace_scope", default=None)


@functools.lru_cache(maxsize=1024)
def turn_of(key: str) -> int:
    """The turn number of a unit key (`turn:3`, `turn:3~task` → 3), else 0."""
    match = re.match(r"turn:(\d+)", key)
    return int(match.group(1)) if match else 0


def _task_id() -> int:
    """The running anyio task's id; on asyncio read straight off the task (anyio's id is
    `id(task)` there), since building a `TaskInfo` per streamed frame is a measurable cost."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop running (trio)
        task = None
    return id(task) if task is not None else anyio.get_current_task().id


def _current_task() -> object:
    """The running task object (held by a Scope so its id cannot be reused meanwhile)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _task() -> tuple[int, str]:
    info = anyio.get_current_task()
    return info.id, info.name or ""


def current_scope() -> Scope | None:
    """The unit the running task works for (a job task is known by its name)."""
    scope = _SCOPE.get()
    if scope is None:
        return None
    if scope.task == _task_id():
        return scope
    task_id, name = _task()
    key = name if name.startswith("job:") else f"{scope.key}~{name}"
    child = Scope(scope.chat_id, key, task_id, _current_task())
    _SCOPE.set(child)
    return child


class Player(Protocol):
    """What a replay supplies: recorded values by structural key, and the sync gate."""

    def live(self, key: str) -> bool: ...
    def clock(self, key: str, n: int) -> datetime | None: ...
    def id(self, key: str, n: int, prefix: str) -> str | None: ...
    def call(self, key: str, request: ModelRequest) -> ModelCallEvent: ...
    async def gate(self, key: str, n: int) -> None: ...
    def passed(self, key: str, n: int) -> None: ...


class GraphHasher:
    """A running hash and line counts of the graph ledgers (reads only what was appended)."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph
        self._cursor = LedgerCursor()
        self._hashes = {name: hashlib.sha256() for name in LEDGERS}
        self._counts = dict.fromkeys(LEDGERS, 0)
        self._lock = anyio.Lock()

    async def state(self) -> tuple[dict[str, int], str]:
        async with self._lock:
            batch, self._cursor = await self._graph.read_since(self._cursor)
            for name in LEDGERS:
                for line in getattr(batch, name):
                    self._hashes[name].update(CANONICAL.encode(line) + b"\n")
                    self._counts[name] += 1
            whole = hashlib.sha256()
            for name in LEDGERS:
                whole.update(self._hashes[name].digest())
            return dict(self._counts), whole.hexdigest()[:32]


class Tracer:
    """Records a chat's trace; disabled (every hook a no-op) when built without stores."""

    def __init__(
        self,
        traces: Any = None,
        chats: ChatStore | None = None,
        graph: GraphStore | None = None,
        *,
        player: Player | None = None,
        timer: Callable[[], float] = time.perf_counter,
        config: Mapping[str, str] | None = None,
    ) -> None:
        self.enabled = traces is not None and chats is not None
        self._traces = getattr(traces, "raw", traces)  # we write the stored (interned) form
        self._chats = chats
        self._graph = GraphHasher(graph) if graph is not None else None
        self.player = player
        self._timer = timer
        self.config = dict(config or {})
        self._buffers: dict[str, list[AnyTraceEvent]] = {}
        self._next_seq: dict[str, int] = {}
        # Per chat, most recently flushed last: what its trace stores once (by content hash).
        self._interners: OrderedDict[str, Interner] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}
        self._state_locks: dict[str, anyio.Lock] = {}
        self._counters: dict[tuple[str, str, str], int] = {}
        self._emitted: dict[str, int] = {}

    @classmethod
    def recording(cls, stores: Any, settings: Any, **kwargs: Any) -> Tracer:
        """The production recorder over the app's stores; `config` names each role's model."""
        return cls(
            stores.traces, stores.chats, stores.graph, config=role_config(settings), **kwargs
        )

    # -- core ---------------------------------------------------------------------------

    def count(self, scope: Scope, kind: str) -> int:
        """The next ordinal of `kind` in `scope` (0, 1, ...)."""
        slot = (scope.chat_id, scope.key, kind)
        n = self._counters.get(slot, 0)
        self._counters[slot] = n + 1
        return n

    def emit(self, chat_id: str, event: AnyTraceEvent) -> None:
        """Queue an event (its seq is assigned at flush, in emission order)."""
        if self.enabled:
            self._buffers.setdefault(chat_id, []).append(event)
            if self.player is not None:
                self._emitted[chat_id] = self._emitted.get(chat_id, 0) + 1

    def emitted(self, chat_id: str) -> int:
        """Replay only: how many events the chat's trace has been given so far."""
        return self._emitted.get(chat_id, 0)

    @contained
    async def flush(self, chat_id: str) -> None:
        """Write the chat's buffered events, numbered in emission order, large repeated
        text stored once by content hash (a failure is logged: recording never breaks the
        lesson)."""
        if not self.enabled or not self._buffers.get(chat_id):
            return
        # Shielded: events once taken from the buffer must reach the file. A flush cancelled
        # at shutdown lost them, and a trace missing its tail cannot replay.
        with anyio.CancelScope(shield=True):
            await self._flush(chat_id)

    async def _flush(self, chat_id: str) -> None:
        lock = self._locks.setdefault(chat_id, anyio.Lock())
        async with lock:
            events = self._buffers.pop(chat_id, [])
            if not events:
                return
            interner = self._interners.pop(chat_id, None)
            if interner is None or chat_id not in self._next_seq:
                existing = await self._traces.read(chat_id)
                self._next_seq[chat_id] = len(existing)
                interner = Interner.of(existing)
            self._interners[chat_id] = interner
            if len(self._interners) > MAX_INTERNED_CHATS:
                # Bounded memory: an evicted chat re-reads its trace at its next flush.
                old, _ = self._interners.popitem(last=False)
                self._next_seq.pop(old, None)
            first = self._next_seq[chat_id]
            events = [
                interner.intern(msgspec.structs.replace(e, seq=first + i))
                for i, e in enumerate(events)
            ]
            self._next_seq[chat_id] = first + len(events)
            try:
                await self._traces.append(chat_id, events)
            except BaseException:
                interner.forget(events)  # a later event must store these texts again
                raise

    async def flush_all(self) -> None:
        """Write every buffered event (at shutdown); a failure is logged, never raised."""
        for chat_id in list(self._buffers):
            try:
                await self.flush(chat_id)
            except Exception as exc:
                log.warning("[trace] could not write chat %s's last events: %s", chat_id, exc)

    async def gate(self) -> None:
        """Replay only: wait until the sync points recorded before this unit's next one
        have happened."""
        scope = current_scope()
        if self.player is None or scope is None:
            return
        n = self._counters.get((scope.chat_id, scope.key, "sync"), 0)
        await self.player.gate(scope.key, n)

    async def sync(
        self,
        scope: Scope,
        event: AnyTraceEvent | None = None,
        make: Callable[[], Awaitable[AnyTraceEvent]] | None = None,
    ) -> None:
        """Emit a sync point and flush. The event (or `make()`, which may read state) is
        taken under the chat's state lock, so its place in the trace is the order in which
        it saw the chat's state; in a replay it first waits for its recorded turn.

        The flush happens inside the sync point: once it has passed, its unit runs on to
        its next await without yielding, so what it does right after (claim or release the
        chat's turn slot, see `backend.server.services.Services.deliver_jobs`) is ordered
        with the sync point, in the recording and in its replay alike."""
        async with self._ordered(scope):
            if make is not None:
                event = await make()
            assert event is not None
            self.emit(scope.chat_id, msgspec.structs.replace(event, scope=scope.key))
            await self.flush(scope.chat_id)

    @asynccontextmanager
    async def _ordered(self, scope: Scope) -> AsyncIterator[None]:
        """Gate (replay), hold the chat's state lock, and count one sync point."""
        player = self.player
        if player is not None:
            await player.gate(scope.key, self._counters.get((scope.chat_id, scope.key, "sync"), 0))
        async with self._state_locks.setdefault(scope.chat_id, anyio.Lock()):
            yield
            n = self.count(scope, "sync")
        if player is not None:
            player.passed(scope.key, n)

    @asynccontextmanager
    async def access(self, chat_id: str | None, what: str) -> AsyncIterator[None]:
        """A unit reading or writing shared state (chat record, graph): a sync point, so a
        replay serialises these accesses across units exactly as recorded."""
        scope = current_scope()
        if not self.enabled or scope is None or (chat_id and scope.chat_id != chat_id):
            yield
            return
        async with self._ordered(scope):
            yield
            self.emit(scope.chat_id, MarkEvent(seq=0, scope=scope.key, mark=what))  # type: ignore[arg-type]

    @contextmanager
    def enter(self, chat_id: str, key: str) -> Iterator[Scope]:
        scope = Scope(chat_id, key, _task()[0], _current_task())
        token = _SCOPE.set(scope)
        try:
            yield scope
        finally:
            _SCOPE.reset(token)

    async def _graph_state(self) -> tuple[dict[str, int], str]:
        if self._graph is None:
            return {}, ""
        return await self._graph.state()

    # -- hooks: chats and turns ---------------------------------------------------------

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
    async def begin_turn(self, chat_id: str) -> None:
        """At a turn's start (before it draws any time or id): the unit `turn:<n>`."""
        if not self.enabled:
            return
        record = await self._chats.get(chat_id)  # type: ignore[union-attr]
        turn = record.turns + 1
        scope = Scope(chat_id, f"turn:{turn}", _task()[0], _current_task())
        _SCOPE.set(scope)

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
    async def step(self, chat_id: str, turn: int) -> None:
        """Before a teacher step reads the chat (replay orders job results against it)."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        n = self._counters.get((chat_id, scope.key, "step"), 0)
        self.count(scope, "step")
        await self.sync(scope, MarkEvent(seq=0, mark="step", turn=turn, step=n))

    @contained
    async def prompt(self, chat_id: str, turn: int, prompt: Any) -> None:
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
    async def tool_run(
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
                output=_json(part.output) if part.output is not None else "",
                error=part.error,
                plan_before=_json(before) if before is not None else "",
                plan_after=_json(after) if after is not None else "",
            ),
        )
        if part.tool_name in ("quiz", "ask_user_question") and part.state == "input-available":
            self.emit(
                chat_id,
                QuizEvent(
                    seq=0,
                    scope=scope.key,
                    turn=turn,
                    tool_call_id=part.tool_call_id,
                    phase="issued",
                    detail=_json(part.input),
                ),
            )

    @contained
    async def quiz_graded(self, chat_id: str, turn: int, part: ToolPart) -> None:
        scope = current_scope()
        if not self.enabled or scope is None:
            return
        self.emit(
            chat_id,
            QuizEvent(
                seq=0,
                scope=scope.key,
                turn=turn,
                tool_call_id=part.tool_call_id,
                phase="graded",
                detail=_json(part.output),
            ),
        )

    @contained
    async def jobs_delivered(self, chat_id: str, turn: int, notices: list[NoticePart]) -> None:
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

    @contained
    async def checkpoint(self, chat_id: str, turn: int) -> None:
        """At a turn's end: hashes of the transcript, the plan tree and the graph."""
        scope = current_scope()
        if not self.enabled or scope is None:
            return

        async def make() -> CheckpointEvent:
            record = await self._chats.get(chat_id)  # type: ignore[union-attr]
            _, graph = await self._graph_state()
            return CheckpointEvent(
                seq=0,
                turn=turn,
                transcript_hash=digest(record.messages),
                plan_hash=digest(record.plan),
                graph_hash=graph,
            )

        await self.sync(scope, make=make)

    # -- hooks: frames, jobs, extraction ------------------------------------------------

    @contained
    async def inbound(self, chat_id: str, raw: str | bytes) -> None:
        """A learner frame as received (before decoding: bad frames are recorded too).

        The receiving task becomes the chat's `learner` unit: what the frame then reads
        (an answer reads its question) is a sync point, and the turn it claims is claimed
        right after one (nothing awaits in between), so a replay orders it as recorded."""
        if not self.enabled:
            return
        scope = Scope(chat_id, "learner", _task()[0], _current_task())
        _SCOPE.set(scope)
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

    @contained
    async def job(self, chat_id: str, job_id: str, phase: str, detail: str = "") -> None:
        scope = current_scope()
        if not self.enabled:
            return
        if scope is None or scope.chat_id != chat_id:
            scope = Scope(chat_id, f"job:{job_id}", _task()[0], _current_task())
        turn = turn_of(scope.key)
        event = JobTraceEvent(seq=0, job_id=job_id, phase=phase, turn=turn, detail=detail)  # type: ignore[arg-type]
        await self.sync(scope, event)

    # -- port wrappers ------------------------------------------------------------------

    def model(self, inner: ChatModel) -> ChatModel:
        return TracingModel(inner, self) if self.enabled else inner

    def clock(self, inner: Clock) -> Clock:
        return TracingClock(inner, self) if self.enabled else inner

    def ids(self, inner: IdGen) -> IdGen:
        return TracingIds(inner, self) if self.enabled else inner

    def stores(self, stores: Any) -> Any:
        """The app's stores with chat and graph access recorded (when enabled) and traces
        read with full text (`ExpandedTraces`, so the trace route shows whole requests)."""
        traces = stores.traces
        if not isinstance(traces, ExpandedTraces):
            traces = ExpandedTraces(traces)
        if not self.enabled:
            return type(stores)(
                chats=stores.chats, graph=stores.graph, jobs=stores.jobs, traces=traces
            )
        return type(stores)(
            chats=TracingChatStore(stores.chats, self),
            graph=TracingGraphStore(stores.graph, self),
            jobs=stores.jobs,
            traces=traces,
        )

    def trace_store(self) -> TraceSink:
        """A `TraceStore` for the extraction pipeline's own event (sequenced through us)."""
        return TraceSink(self)


class ExpandedTraces:
    """`TraceStore` whose `read` restores every interned text (`expand_blobs`); `raw` is
    the store as written. A ref to a text the trace never stored is a `CorruptRecord`."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        await self.raw.append(chat_id, events)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
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
        scope = current_scope() or Scope(chat_id, "server", _task()[0], _current_task())
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
        n = self.tracer.count(scope, "clock")
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
        n = self.tracer.count(scope, "id")
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
            recorded = player.call(key, request)  # raises ReplayDivergence
            tracer.emit(scope.chat_id, msgspec.structs.replace(recorded, scope=scope.key))
            await tracer.flush(scope.chat_id)
            for event in replay_events(recorded):
                yield event
            if recorded.error:
                raise ModelError(recorded.error)
            return
        start = tracer._timer()
        chunks: list[TimedChunk] = []
        try:
            async for event in self.inner.stream(request):
                t_ms = round((tracer._timer() - start) * 1000, 3)
                if isinstance(event, TextChunk):
                    chunks.append(TimedChunk(t_ms=t_ms, text=event.text))
                elif isinstance(event, ToolCallChunk):
                    chunks.append(
                        TimedChunk(
                            t_ms=t_ms,
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
                yield event
        except Exception as exc:
            call = msgspec.structs.replace(call, error=str(exc)[:2000] or type(exc).__name__)
            raise
        finally:
            tracer.emit(scope.chat_id, msgspec.structs.replace(call, chunks=chunks))
            with anyio.CancelScope(shield=True):
                await tracer.flush(scope.chat_id)


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


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


class TracingChatStore:
    """`ChatStore` whose reads and writes from a unit are recorded sync points."""

    def __init__(self, inner: ChatStore, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def create(self, record: ChatRecord) -> None:
        await self.inner.create(record)

    async def list_summaries(self):
        return await self.inner.list_summaries()

    async def get(self, chat_id: str) -> ChatRecord:
        async with self.tracer.access(chat_id, "read"):
            return await self.inner.get(chat_id)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        async with self.tracer.access(chat_id, "write"):
            return await self.inner.update(chat_id, mutate)


class TracingGraphStore:
    """`GraphStore` whose reads and appends from a unit are recorded sync points."""

    def __init__(self, inner: GraphStore, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def read_since(self, cursor: LedgerCursor):
        async with self.tracer.access(None, "graph_read"):
            return await self.inner.read_since(cursor)

    async def append(self, batch) -> None:
        async with self.tracer.access(None, "graph_write"):
            await self.inner.append(batch)


class TracingPipeline:
    """The extraction pipeline run as its own unit (`extraction:<run>`)."""

    def __init__(self, inner: Any, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    async def run(self, chat_id: str) -> Any:
        if not self.tracer.enabled:
            return await self.inner.run(chat_id)
        # The unit is named by the run id it draws (a run with nothing to do draws none).
        with self.tracer.enter(chat_id, "extraction"):
            return await self.inner.run(chat_id)


def role_config(settings: Any) -> dict[str, str]:
    """What replay needs to rebuild the session's roles and thresholds."""
    return {
        "teacher": settings.model or "offline",
        "extractor": settings.extractor_model or "offline",
        "auditor": settings.auditor_model or "offline",
        "subagent": settings.subagent_model or "offline",
        "every_n_quiz_answers": str(settings.every_n_quiz_answers),
        "max_steps": str(settings.max_steps),
    }


def traced_roles(
    settings: Any,
    tracer: Tracer,
    stages: tuple[Any, Any] | None,
    agents: Mapping[str, Any] | None,
    make_model: Callable[[str], ChatModel] | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """(extractor, auditor, sub-agents) whose model calls are recorded: given ones are kept
    (only their results are gated), missing ones are built as `backend.server.models` does,
    on `make_model(model_string)` wrapped by the tracer."""
    from backend.agent.extraction.auditor import create_auditor
    from backend.agent.extraction.extractor import create_extractor
    from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
    from backend.agent.jobs.demo_builder import create_demo_builder
    from backend.agent.jobs.offline import offline_subagents
    from backend.agent.jobs.researcher import create_researcher
    from backend.agent.jobs.visual_maker import create_visual_maker

    def model(name: str) -> ChatModel:
        if make_model is not None:
            return tracer.model(make_model(name))
        from backend.agent.litellm_model import LitellmChatModel

        return tracer.model(LitellmChatModel(name))

    if stages is None:
        stages = (
            create_extractor(model(settings.extractor_model))
            if settings.extractor_model
            else OfflineExtractor(),
            create_auditor(model(settings.auditor_model))
            if settings.auditor_model
            else OfflineAuditor(),
        )
    if agents is None:
        if settings.subagent_model:
            sub = model(settings.subagent_model)
            agents = {
                "research": create_researcher(sub),
                "demo": create_demo_builder(sub),
                "visual": create_visual_maker(sub),
            }
        else:
            agents = dict(offline_subagents())
    return stages[0], stages[1], dict(agents)


NO_TRACE = Tracer()
"""The disabled tracer (handlers and hubs built without one)."""
