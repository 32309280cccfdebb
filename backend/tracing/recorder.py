"""The recorder's queue: events per chat, numbered and written when a unit ends.

Events get their `seq` when flushed, in emission order. Large repeated text is written
once per chat trace by content hash (`interner`). A run of streamed `text_delta` frames of
one message from one unit is queued as one `DeltaRun` (no event per frame) and stored as
one event (`delta_run`). A write failure is logged: recording never breaks the lesson.
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import anyio
import msgspec

from backend.core.ports import TraceStore
from backend.tracing.interner import Interner, ToolsText
from backend.tracing.units import (
    SCOPE_VAR,
    Scope,
    current_scope,
    is_session_end,
    running_task,
    turn_of,
)
from shared_contracts.trace import AnyTraceEvent, InboundFrameEvent, MarkEvent, OutboundFrameEvent
from shared_contracts.trace_blobs import delta_run, next_seq

log = logging.getLogger("harness.trace")

MAX_INTERNED_CHATS = 128
"""Chats whose trace-interning state stays in memory between flushes."""

P = ParamSpec("P")
R = TypeVar("R")


def contained(hook: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R | None]]:
    """A recording hook never breaks the lesson: a failure is logged, never raised."""

    @functools.wraps(hook)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return await hook(*args, **kwargs)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            log.warning("[trace] %s failed: %s", getattr(hook, "__name__", "hook"), exc)
            return None

    return run


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


Queued = AnyTraceEvent | DeltaRun


class Recorder:
    """Each chat's queued events and their writing; disabled without a trace store."""

    def __init__(self, traces: TraceStore | None, *, replaying: bool = False) -> None:
        self.enabled = traces is not None
        self.traces = traces
        """The store as written (interned): readers expand it (`ExpandedTraces`)."""
        self._replaying = replaying
        self._buffers: dict[str, list[Queued]] = {}
        self._next_seq: dict[str, int] = {}
        # Per chat, most recently flushed last: what its trace stores once (by content hash).
        self._interners: OrderedDict[str, Interner] = OrderedDict()
        self._tools = ToolsText()
        self._locks: dict[str, anyio.Lock] = {}
        self._emitted: dict[str, int] = {}

    # -- queueing -----------------------------------------------------------------------

    def emit(self, chat_id: str, event: AnyTraceEvent) -> None:
        """Queue an event (its seq is assigned at flush, in emission order)."""
        if self.enabled:
            self._buffers.setdefault(chat_id, []).append(event)
            if self._replaying:
                self._emitted[chat_id] = self._emitted.get(chat_id, 0) + 1

    def outbound(self, chat_id: str, text: str) -> None:
        """A frame broadcast to the chat's clients (flushed with the next sync point)."""
        if not self.enabled:
            return
        scope = current_scope()
        key = scope.key if scope is not None and scope.chat_id == chat_id else "server"
        self.emit(chat_id, OutboundFrameEvent(seq=0, scope=key, turn=turn_of(key), frame=text))

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
                    if self._replaying:
                        self._emitted[chat_id] += 1
                    return
        scope = current_scope()
        key = scope.key if scope is not None and scope.chat_id == chat_id else "server"
        if type(last) is DeltaRun and last.key == key and last.message_id == message_id:
            last.deltas.append(text)
            if self._replaying:
                self._emitted[chat_id] += 1
        else:
            last = DeltaRun(key, turn_of(key), message_id, [text])
            self._buffers.setdefault(chat_id, []).append(last)
            if self._replaying:
                self._emitted[chat_id] = self._emitted.get(chat_id, 0) + 1
        last.var = SCOPE_VAR.get()
        last.task = running_task()

    def text_deltas(self, chat_id: str, message_id: str) -> Callable[[str], None]:
        """`record(text)`: `outbound_delta(chat_id, message_id, text)` for a unit streaming
        one message's text, at the cost of an append while its run is the last thing
        queued for the chat (anything queued after it, or a flush, starts a new one).
        Only the unit that calls this may record with it: the run is known to be its own."""
        if not self.enabled:
            return _ignore
        run: DeltaRun | None = None
        buffers, emitted, replaying = self._buffers, self._emitted, self._replaying

        def record(text: str) -> None:
            nonlocal run
            queue = buffers.get(chat_id)
            if run is not None and queue and queue[-1] is run:
                run.deltas.append(text)
                if replaying:
                    emitted[chat_id] += 1
                return
            self.outbound_delta(chat_id, message_id, text)  # starts or joins the run
            last = buffers[chat_id][-1]
            assert type(last) is DeltaRun
            run = last

        return record

    def queued(self, chat_id: str) -> list[Queued]:
        """What is queued for the chat, not yet written (a copy)."""
        return list(self._buffers.get(chat_id, ()))

    def emitted(self, chat_id: str) -> int:
        """Replay only: how many events the chat's trace has been given so far."""
        return self._emitted.get(chat_id, 0)

    # -- writing ------------------------------------------------------------------------

    @contained
    async def flush(self, chat_id: str) -> None:
        """Write the chat's queued events, numbered in emission order, large repeated text
        stored once by content hash (a failure is logged: recording never breaks the
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
            interner = await self._interner(chat_id)
            seq = self._next_seq[chat_id]
            stored: list[AnyTraceEvent] = []
            for e in events:
                if type(e) is DeltaRun:
                    stored.append(delta_run(seq, e.key, e.turn, e.message_id, e.deltas))
                    seq += len(e.deltas)
                else:
                    assert not isinstance(e, DeltaRun)
                    stored.append(interner.intern(msgspec.structs.replace(e, seq=seq)))
                    seq += 1
            self._next_seq[chat_id] = seq
            try:
                await self._store().append(chat_id, stored)
            except BaseException:
                interner.forget(stored)  # a later event must store these texts again
                raise

    async def _interner(self, chat_id: str) -> Interner:
        """The chat's interning state (and next seq), read from its trace when not kept."""
        interner = self._interners.pop(chat_id, None)
        if interner is None or chat_id not in self._next_seq:
            existing = await self._store().read(chat_id)
            self._next_seq[chat_id] = next_seq(existing)
            interner = Interner.of(existing, self._tools)
        self._interners[chat_id] = interner
        if len(self._interners) > MAX_INTERNED_CHATS:
            # Bounded memory: an evicted chat re-reads its trace at its next flush.
            old, _ = self._interners.popitem(last=False)
            self._next_seq.pop(old, None)
        return interner

    def _store(self) -> TraceStore:
        assert self.traces is not None
        return self.traces

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
        """Write every queued event (at shutdown); a failure is logged, never raised."""
        for chat_id in list(self._buffers):
            try:
                await self.flush(chat_id)
            except Exception as exc:
                log.warning("[trace] could not write chat %s's last events: %s", chat_id, exc)

    # -- per-chat entries (see `Tracer.sweep`) -----------------------------------------

    def chats(self) -> set[str]:
        """The chats this queue keeps an entry for."""
        return self._locks.keys() | self._buffers.keys() | self._next_seq.keys()

    def idle(self, chat_id: str) -> bool:
        """Nothing queued for the chat and no write of it in flight or waiting."""
        return not self._buffers.get(chat_id) and not in_use(self._locks.get(chat_id))

    def forget(self, chat_id: str) -> None:
        for table in (self._locks, self._next_seq, self._buffers, self._interners):
            table.pop(chat_id, None)

    def entries(self) -> int:
        tables = (self._locks, self._next_seq, self._interners, self._buffers, self._emitted)
        return sum(len(t) for t in tables)


def in_use(lock: anyio.Lock | None) -> bool:
    return lock is not None and (lock.locked() or lock.statistics().tasks_waiting > 0)


def _ignore(text: str) -> None:
    """A disabled recorder's `text_deltas` recorder."""


def _opens_trace(event: Queued) -> bool:
    """A learner frame or a turn's start: what a chat's trace begins with (not the
    session-end request: ending an unused chat leaves it without a trace)."""
    if isinstance(event, MarkEvent):
        return event.mark == "turn_started"
    return isinstance(event, InboundFrameEvent) and not is_session_end(event.scope)
