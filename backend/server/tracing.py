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
learner frames of one socket is that socket's unit, `learner:<n>` (older traces: one
`learner` unit for every socket).

Nothing secret is recorded: requests are our own `ModelRequest` (no keys, no headers).
Large repeated text is written once per chat trace by content hash (`flush` interns it,
see `shared_contracts.trace_blobs`); `ExpandedTraces` is the store readers see, full text.

Modules: this one is the `Tracer` core (buffers, flush, sync points, scopes) and the public
face; `tracing_core` (hashes, `Scope`, `Player`), `tracing_hooks` (what the server calls),
`tracing_ports` (model/clock/ids/store wrappers), `tracing_roles` (traced roles).
"""

from __future__ import annotations

import dataclasses
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any

import anyio
import msgspec
from anyio.lowlevel import checkpoint_if_cancelled

from backend.core.ports import ChatModel, ChatStore, Clock, GraphStore, IdGen
from backend.server.tracing_core import (
    CANONICAL,
    END_SESSION,
    LEDGERS,
    MAX_INTERNED_CHATS,
    SCOPE_VAR,
    SYNC_TYPES,
    GraphHasher,
    Player,
    ReplayDivergence,
    Scope,
    TranscriptHasher,
    contained,
    current_scope,
    digest,
    is_session_end,
    is_sync,
    is_turn_unit,
    log,
    request_hash,
    running_task,
    turn_of,
)
from backend.server.tracing_hooks import TraceHooks
from backend.server.tracing_ports import (
    ExpandedTraces,
    ReplayJobStore,
    TraceSink,
    TracingChatStore,
    TracingClock,
    TracingGraphStore,
    TracingIds,
    TracingModel,
    TracingPipeline,
    read_expanded,
    replay_events,
)
from backend.server.tracing_roles import role_config, traced_roles
from shared_contracts.trace import (
    AnyTraceEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
)
from shared_contracts.trace_blobs import Interner, delta_run, next_seq

__all__ = [
    "CANONICAL",
    "LEDGERS",
    "NO_TRACE",
    "SYNC_TYPES",
    "ExpandedTraces",
    "GraphHasher",
    "Player",
    "ReplayDivergence",
    "Scope",
    "TraceHooks",
    "TraceSink",
    "Tracer",
    "TracingChatStore",
    "TracingClock",
    "TracingGraphStore",
    "TracingIds",
    "TracingModel",
    "TracingPipeline",
    "TranscriptHasher",
    "contained",
    "current_scope",
    "digest",
    "is_sync",
    "read_expanded",
    "replay_events",
    "request_hash",
    "role_config",
    "traced_roles",
    "turn_of",
]

SWEEP_S = 30.0
"""How often the app's recorder forgets idle chats (`Tracer.sweep`)."""


class Tracer(TraceHooks):
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
        self._buffers: dict[str, list[Any]] = {}  # AnyTraceEvent | DeltaRun
        self._next_seq: dict[str, int] = {}
        # Per chat, most recently flushed last: what its trace stores once (by content hash).
        self._interners: OrderedDict[str, Interner] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}
        self._state_locks: dict[str, anyio.Lock] = {}
        self._counters: dict[tuple[str, str, str], int] = {}
        self._transcripts = TranscriptHasher()
        self._emitted: dict[str, int] = {}
        self._cuts: dict[tuple[str, str], int] = {}
        self._sockets: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._socket_counts: dict[str, int] = {}
        self._end_counts: dict[str, int] = {}

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

    def replay_count(self, scope: Scope, kind: str) -> int:
        """`count`, kept only in a replay: the ordinals of clock and id values and of sync
        points are what a `Player` answers by; a recording writes none of them (so it
        keeps no counter for them)."""
        return 0 if self.player is None else self.count(scope, kind)

    def unit_done(self, chat_id: str, key: str) -> None:
        """The unit `key` (and its helper tasks, `key~name`) will number nothing more: a
        recording drops its counters, so a long-running server keeps none per finished
        turn, job or extraction run. A replay keeps them (it is short-lived, and a held
        unit may still pass sync points)."""
        self._cuts.pop((chat_id, key), None)
        if self.player is not None:
            return
        child = key + "~"
        for slot in [s for s in self._counters if s[0] == chat_id and _of_unit(s[1], key, child)]:
            del self._counters[slot]

    def learner_unit(self, chat_id: str, socket: object) -> str:
        """The unit of the learner frames `socket` sends to `chat_id`: `learner:<n>`, n its
        ordinal among the chat's sockets. Each socket is its own unit, so a replay feeds
        each socket's frames on its own (two sockets racing replay as recorded)."""
        if not self.enabled:
            return "learner"
        unit = self._sockets.get(socket)
        if unit is None:
            n = self._socket_counts.get(chat_id, 0)
            self._socket_counts[chat_id] = n + 1
            unit = self._sockets[socket] = f"learner:{n}"
        return unit

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
        if not unit:
            n = self._end_counts.get(chat_id, 0)
            self._end_counts[chat_id] = n + 1
            unit = f"end:{n}"
        token = SCOPE_VAR.set(None)
        # While the request runs its unit holds a counter: `sweep` keeps the chat's entries
        # (its numbering), so no later request is named as this one.
        self._counters[(chat_id, unit, "request")] = 1
        try:
            await self.inbound(chat_id, END_SESSION, unit)
            yield
        finally:
            SCOPE_VAR.reset(token)
            self._counters.pop((chat_id, unit, "request"), None)
            self.unit_done(chat_id, unit)

    def counters(self) -> int:
        """How many counters are kept (a recording's stay bounded by its running units)."""
        return len(self._counters)

    def emit(self, chat_id: str, event: AnyTraceEvent) -> None:
        """Queue an event (its seq is assigned at flush, in emission order)."""
        if self.enabled:
            self._buffers.setdefault(chat_id, []).append(event)
            if self.player is not None:
                self._emitted[chat_id] = self._emitted.get(chat_id, 0) + 1

    def outbound_delta(self, chat_id: str, message_id: str, text: str) -> None:
        """A `text_delta` frame of `message_id` broadcast to the chat (as `outbound`): added
        to the run of deltas the chat's queue ends with when that run is the same unit's
        and message's — no event per frame; a run is stored as one (`delta_run`)."""
        if not self.enabled:
            return
        queue = self._buffers.get(chat_id)
        last = queue[-1] if queue else None
        if type(last) is DeltaRun and last.message_id == message_id:
            # Per frame: the run's task, with the scope it saw, is the unit (what
            # `current_scope` would find again, without its lookups).
            var = SCOPE_VAR.get()
            if var is last.var and running_task() is last.task:
                key = var.key if var is not None and var.chat_id == chat_id else "server"
                if key == last.key:
                    last.deltas.append(text)
                    if self.player is not None:
                        self._emitted[chat_id] += 1
                    return
        scope = current_scope()
        key = scope.key if scope is not None and scope.chat_id == chat_id else "server"
        if type(last) is DeltaRun and last.key == key and last.message_id == message_id:
            last.deltas.append(text)
            if self.player is not None:
                self._emitted[chat_id] += 1
        else:
            last = DeltaRun(key, turn_of(key), message_id, [text])
            self.emit(chat_id, last)  # type: ignore[arg-type]
        last.var = SCOPE_VAR.get()
        last.task = running_task()

    def emitted(self, chat_id: str) -> int:
        """Replay only: how many events the chat's trace has been given so far."""
        return self._emitted.get(chat_id, 0)

    @contained
    async def flush(self, chat_id: str) -> None:
        """Write the chat's buffered events, numbered in emission order, large repeated
        text stored once by content hash (a failure is logged: recording never breaks the
        lesson)."""
        if not self.enabled:
            return
        if not self._buffers.get(chat_id):
            lock = self._locks.get(chat_id)
            if lock is None or not lock.locked():
                return  # nothing queued, nothing being written
            # else: wait for the write in flight, so the caller reads what it holds
        # Shielded: events once taken from the buffer must reach the file. A flush cancelled
        # at shutdown lost them, and a trace missing its tail cannot replay.
        with anyio.CancelScope(shield=True):
            await self._flush(chat_id)

    async def _flush(self, chat_id: str) -> None:
        lock = self._locks.get(chat_id)
        if lock is None:
            lock = self._locks[chat_id] = anyio.Lock(fast_acquire=True)
        async with lock:
            events = self._buffers.pop(chat_id, [])
            if not events:
                return
            interner = self._interners.pop(chat_id, None)
            if interner is None or chat_id not in self._next_seq:
                existing = await self._traces.read(chat_id)
                self._next_seq[chat_id] = next_seq(existing)
                interner = Interner.of(existing)
            self._interners[chat_id] = interner
            if len(self._interners) > MAX_INTERNED_CHATS:
                # Bounded memory: an evicted chat re-reads its trace at its next flush.
                old, _ = self._interners.popitem(last=False)
                self._next_seq.pop(old, None)
            seq = self._next_seq[chat_id]
            stored: list[AnyTraceEvent] = []
            for e in events:
                if type(e) is DeltaRun:
                    stored.append(delta_run(seq, e.key, e.turn, e.message_id, e.deltas))
                    seq += len(e.deltas)
                else:
                    stored.append(interner.intern(msgspec.structs.replace(e, seq=seq)))
                    seq += 1
            self._next_seq[chat_id] = seq
            try:
                await self._traces.append(chat_id, stored)
            except BaseException:
                interner.forget(stored)  # a later event must store these texts again
                raise

    async def settle(self, chat_id: str) -> None:
        """Before a read of the chat's trace: wait for a write in flight and write what is
        queued — once the trace has begun (a chat's trace starts with its first learner
        frame or turn; until then its events wait, as an unused chat has no trace)."""
        queued = self._buffers.get(chat_id)
        if queued and chat_id not in self._next_seq and not any(map(_opens_trace, queued)):
            lock = self._locks.get(chat_id)
            if lock is not None and lock.locked():
                async with lock:
                    pass
            return
        await self.flush(chat_id)

    async def flush_all(self) -> None:
        """Write every buffered event (at shutdown); a failure is logged, never raised."""
        for chat_id in list(self._buffers):
            try:
                await self.flush(chat_id)
            except Exception as exc:
                log.warning("[trace] could not write chat %s's last events: %s", chat_id, exc)

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
        open_chats = {
            getattr(socket, "chat_id", None)
            for socket in list(self._sockets.keys())
            if not getattr(socket, "closed", False)
        }
        running = {slot[0] for slot in self._counters}
        known = (
            self._locks.keys()
            | self._state_locks.keys()
            | self._socket_counts.keys()
            | self._end_counts.keys()
            | self._buffers.keys()
            | self._next_seq.keys()
            | set(self._transcripts.chat_ids())
        )
        forgotten = 0
        for chat_id in known - open_chats - running:
            await self.settle(chat_id)  # what is queued is written (an unused chat's waits)
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
        if self._buffers.get(chat_id) or _in_use(self._locks.get(chat_id)):
            return False
        if _in_use(self._state_locks.get(chat_id)):
            return False
        if any(slot[0] == chat_id for slot in self._counters):
            return False
        tables = (self._locks, self._state_locks, self._socket_counts, self._end_counts)
        for table in (*tables, self._next_seq):
            table.pop(chat_id, None)
        self._buffers.pop(chat_id, None)
        self._interners.pop(chat_id, None)
        self._transcripts.forget(chat_id)
        return True

    def chat_entries(self) -> int:
        """How many per-chat entries the tracer keeps (pruned by `sweep`)."""
        tables = (
            self._locks,
            self._state_locks,
            self._socket_counts,
            self._end_counts,
            self._next_seq,
            self._interners,
            self._buffers,
            self._emitted,
        )
        held = len(self._transcripts.chat_ids())
        return sum(len(t) for t in tables) + len(self._counters) + len(self._cuts) + held

    async def sync(
        self,
        scope: Scope,
        event: AnyTraceEvent | None = None,
        make: Callable[[], Awaitable[AnyTraceEvent]] | None = None,
    ) -> None:
        """Emit a sync point. The event (or `make()`, which may read state) is taken under
        the chat's state lock, so its place in the trace is the order in which it saw the
        chat's state; in a replay it first waits for its recorded turn.

        A sync point is queued, not written (the unit's end flushes: one write a turn):
        once it has passed, its unit runs on to its next await without yielding, so what
        it does right after (claim or release the chat's turn slot, see
        `backend.server.services.Services.deliver_jobs`) is ordered with the sync point, in
        the recording and in its replay alike."""
        if self.player is None:
            event = await self._recorded(scope, None, _emit_sync, (self, scope, event, make))
        else:
            async with self._ordered(scope):
                event = await _emit_sync(self, scope, event, make)
        if type(event) is JobTraceEvent and event.phase == "finished":
            # A finished job numbers nothing more (a recording's counters go: see `sweep`).
            self.unit_done(scope.chat_id, scope.key)

    async def _recorded(
        self, scope: Scope, mark: MarkEvent | None, fn: Callable[..., Awaitable[Any]], args: tuple
    ) -> Any:
        """`await fn(*args)` as one sync point of a recording: what `_ordered` does with no
        player (the chat's state lock, a turn's shield, its count and landing), as plain
        code, not two generator context managers (≈ 10 µs a sync point, ≈ 9 a turn).
        With `mark` (an `access`), a failure counts too, with `mark` emitted after it."""
        turn = is_turn_unit(scope.key)
        failed: Exception | None = None
        with anyio.CancelScope(shield=True) if turn else _NO_GUARD:
            async with self._state_lock(scope.chat_id):
                if mark is None:
                    result = await fn(*args)
                else:
                    try:
                        result = await fn(*args)
                    except anyio.get_cancelled_exc_class():
                        raise
                    except Exception as exc:
                        failed = exc
                    self.emit(scope.chat_id, mark)
                n = scope.syncs  # a turn's ordinal names where an abort lands
                scope.syncs = n + 1
            if failed is not None:
                raise failed
        if turn:
            await self._landing(scope, n)
        return result

    @asynccontextmanager
    async def _ordered(self, scope: Scope, failures: bool = False) -> AsyncIterator[None]:
        """Gate (replay), hold the chat's state lock, and count one sync point. A free lock
        is taken without a scheduling point (`fast_acquire`): a sync point costs no loop
        pass unless another unit holds the chat's state.

        A turn's sync point (gate, lock, and the read or write it orders) is shielded: the
        learner's abort cannot land inside it (half a write done, a gate left early), only
        at the `_landing` right after it or in a model stream — points a trace names, so a
        replay lands it at the same one. With `failures`, an access that raises still
        counts (its caller records it too)."""
        player = self.player
        turn = is_turn_unit(scope.key)
        if player is not None:
            # Past where a recorded shutdown stopped the unit: held (and cancelled) here.
            await player.stop(scope.key, self._counters.get((scope.chat_id, scope.key, "sync"), 0))
        # In a replay every unit's sync point is shielded: the recording shows this one
        # passed (a cancellation that came before it is held and delivered by `stop`), and
        # its gate and lock are waits the recording did not make.
        shielded = turn or player is not None
        guard = anyio.CancelScope(shield=True) if shielded else _NO_GUARD
        with guard:
            if player is not None:
                await player.gate(
                    scope.key, self._counters.get((scope.chat_id, scope.key, "sync"), 0)
                )
            failed: Exception | None = None
            async with self._state_lock(scope.chat_id):
                try:
                    yield
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception as exc:
                    if not failures:
                        raise
                    # A failed access (a mutate refusing: "a plan already exists") saw the
                    # state too: it is the unit's sync point all the same, in the recording
                    # and its replay (else its replay waits on the unit's next one's turn).
                    failed = exc
                if player is not None:
                    n = self.count(scope, "sync")
                else:
                    n = scope.syncs  # a turn's ordinal names where an abort lands
                    scope.syncs = n + 1
            if player is not None:
                player.passed(scope.key, n)
            if failed is not None:
                raise failed
        if turn:
            await self._landing(scope, n)

    def _state_lock(self, chat_id: str) -> anyio.Lock:
        """The chat's state lock; a free one is taken without a scheduling point."""
        lock = self._state_locks.get(chat_id)
        if lock is None:
            lock = self._state_locks[chat_id] = anyio.Lock(fast_acquire=True)
        return lock

    async def next_sync_turn(self) -> None:
        """Replay only: wait until the running unit's next sync point may pass. For code
        that takes a lock of its own right before a sync point (the graph view's refresh):
        a unit must not hold such a lock while its sync point waits for another unit's,
        which may be waiting for that lock (in the recording the lock was taken in trace
        order; in a replay whoever gets there first takes it)."""
        player = self.player
        scope = current_scope()
        if player is None or scope is None:
            return
        n = self._counters.get((scope.chat_id, scope.key, "sync"), 0)
        await player.stop(scope.key, n)  # as `_ordered`: a unit past its recorded end
        with anyio.CancelScope(shield=True):
            await player.gate(scope.key, n)

    def order_before_lock(self, view: Any) -> None:
        """In a replay, `view` (an object with a `before_lock` hook: the shared graph view)
        waits for its unit's next sync point's turn before taking its lock."""
        if self.player is not None and self.enabled:
            view.before_lock = self.next_sync_turn

    async def _landing(self, scope: Scope, n: int) -> None:
        """Where a turn's cancellation takes effect (besides a model stream): right after
        its sync point `n`. Remembered for its checkpoint (`cut_after_sync`); a replay
        holds the turn here if its recording was cut here, until the replayed abort lands."""
        try:
            if self.player is None:
                await checkpoint_if_cancelled()
            else:
                # A replay lands a cancellation only where it landed when recorded: a turn
                # on its way there after the replay's shutdown passes the others.
                await self.player.landing(scope.key, n)
        except anyio.get_cancelled_exc_class():
            self._cuts.setdefault((scope.chat_id, scope.key), n)
            raise

    def cut_after(self, chat_id: str, key: str) -> int:
        """The sync point of unit `key` its cancellation landed right after (-1: none);
        forgotten once asked."""
        return self._cuts.pop((chat_id, key), -1)

    async def accessed(
        self, chat_id: str | None, what: str, fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> Any:
        """`await fn(*args)` inside `access(chat_id, what)` (the same sync point; a
        recording takes it without context managers)."""
        if not self.enabled:
            return await fn(*args)
        scope = current_scope()
        if scope is None or (chat_id and scope.chat_id != chat_id):
            return await fn(*args)
        if self.player is not None:
            async with self.access(chat_id, what):
                return await fn(*args)
        mark = MarkEvent(seq=0, scope=scope.key, mark=what)  # type: ignore[arg-type]
        return await self._recorded(scope, mark, fn, args)

    @asynccontextmanager
    async def access(self, chat_id: str | None, what: str) -> AsyncIterator[None]:
        """A unit reading or writing shared state (chat record, graph): a sync point, so a
        replay serialises these accesses across units exactly as recorded."""
        scope = current_scope()
        if not self.enabled or scope is None or (chat_id and scope.chat_id != chat_id):
            yield
            return
        mark = MarkEvent(seq=0, scope=scope.key, mark=what)  # type: ignore[arg-type]
        async with self._ordered(scope, failures=True):
            try:
                yield
            except anyio.get_cancelled_exc_class():
                raise
            except Exception:
                self.emit(scope.chat_id, mark)  # a failed access is a sync point too
                raise
            self.emit(scope.chat_id, mark)

    @contextmanager
    def enter(self, chat_id: str, key: str) -> Iterator[Scope]:
        scope = Scope.here(chat_id, key)
        token = SCOPE_VAR.set(scope)
        try:
            yield scope
        finally:
            SCOPE_VAR.reset(token)

    async def _graph_state(self) -> tuple[dict[str, int], str]:
        if self._graph is None:
            return {}, ""
        return await self._graph.state()

    def graph_changed(self) -> None:
        """The graph was appended to (through `stores()`): the next state reads it again."""
        if self._graph is not None:
            self._graph.changed()

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
            # A reader sees every event emitted so far (sync points are queued, not written).
            traces = ExpandedTraces(traces, before_read=self.settle if self.enabled else None)
        if not self.enabled:
            return dataclasses.replace(stores, traces=traces)
        if self._graph is not None:
            self._graph.watch(stores.graph)
        return dataclasses.replace(
            stores,
            chats=TracingChatStore(stores.chats, self),
            graph=TracingGraphStore(stores.graph, self),
            jobs=stores.jobs if self.player is None else ReplayJobStore(stores.jobs, self.player),
            traces=traces,
        )

    def trace_store(self) -> TraceSink:
        """A `TraceStore` for the extraction pipeline's own event (sequenced through us)."""
        return TraceSink(self)


class DeltaRun:
    """Queued `text_delta` frames of one message from one unit, in order."""

    __slots__ = ("deltas", "key", "message_id", "task", "turn", "var")

    def __init__(self, key: str, turn: int, message_id: str, deltas: list[str]) -> None:
        self.key = key
        self.turn = turn
        self.message_id = message_id
        self.deltas = deltas
        self.var: Scope | None = None  # the scope variable and task of the last delta
        self.task: object = None


_NO_GUARD = nullcontext()


async def _emit_sync(
    tracer: Tracer,
    scope: Scope,
    event: AnyTraceEvent | None,
    make: Callable[[], Awaitable[AnyTraceEvent]] | None,
) -> AnyTraceEvent:
    """The body of a `sync` point: the event (or `make()`'s) queued as `scope`'s."""
    if make is not None:
        event = await make()
    assert event is not None
    tracer.emit(scope.chat_id, msgspec.structs.replace(event, scope=scope.key))
    return event


def _in_use(lock: anyio.Lock | None) -> bool:
    return lock is not None and (lock.locked() or lock.statistics().tasks_waiting > 0)


def _of_unit(key: str, unit: str, child: str) -> bool:
    return key == unit or key.startswith(child)


def _opens_trace(event: object) -> bool:
    """A learner frame or a turn's start: what a chat's trace begins with (not the
    session-end request: ending an unused chat leaves it without a trace)."""
    if isinstance(event, MarkEvent):
        return event.mark == "turn_started"
    return isinstance(event, InboundFrameEvent) and not is_session_end(event.scope)


NO_TRACE = Tracer()
"""The disabled tracer (handlers and hubs built without one)."""
