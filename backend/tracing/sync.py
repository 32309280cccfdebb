"""Sync points: what a replay orders concurrent units by.

Turn/step marks, every chat-record and graph read or write made by a unit (recorded under
a per-chat state lock, so trace order is the order units saw the shared state), job and
extraction events, checkpoints and learner frames are sync points. A replay's `Player`
holds each until everything recorded before it in other units has happened.

A sync point is queued, not written (the unit's end flushes: one write a turn), and once
it has passed its unit runs on to its next await without yielding: what it does right
after (claim or release the chat's turn slot) is ordered with it, in the recording and in
its replay alike. Decisions on state the trace does not see are taken right after one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any, Protocol, TypeVar

import anyio
import msgspec
from anyio.lowlevel import checkpoint_if_cancelled

from backend.tracing.player import Player
from backend.tracing.recorder import Recorder, in_use
from backend.tracing.units import Scope, Units, current_scope, is_turn_unit
from shared_contracts.trace import Access, AnyTraceEvent, JobTraceEvent, MarkEvent

R = TypeVar("R")
MakeEvent = Callable[[], Awaitable[AnyTraceEvent]]
_NO_GUARD: AbstractContextManager[None] = nullcontext()


class LockOrdered(Protocol):
    """Something that takes a lock of its own before a sync point (the shared graph view)."""

    before_lock: Callable[[], Awaitable[None]] | None


class SyncOrder:
    """Sync points of every unit, per chat, under the chat's state lock (gated by the
    player in a replay)."""

    def __init__(self, recorder: Recorder, units: Units, player: Player | None) -> None:
        self._recorder = recorder
        self._units = units
        self._player = player
        self._state_locks: dict[str, anyio.Lock] = {}

    async def sync(
        self, scope: Scope, event: AnyTraceEvent | None = None, make: MakeEvent | None = None
    ) -> None:
        """Emit a sync point. The event (or `make()`, which may read state) is taken under
        the chat's state lock, so its place in the trace is the order in which it saw the
        chat's state; in a replay it first waits for its recorded turn."""
        if self._player is None:
            event = await self._recorded(scope, None, self._emit, scope, event, make)
        else:
            async with self._ordered(scope):
                event = await self._emit(scope, event, make)
        if type(event) is JobTraceEvent and event.phase == "finished":
            # A finished job numbers nothing more (a recording's counters go: see `sweep`).
            self._units.unit_done(scope.chat_id, scope.key)

    async def _emit(
        self, scope: Scope, event: AnyTraceEvent | None, make: MakeEvent | None
    ) -> AnyTraceEvent:
        """The body of a `sync` point: the event (or `make()`'s) queued as `scope`'s."""
        if make is not None:
            event = await make()
        assert event is not None
        self._recorder.emit(scope.chat_id, msgspec.structs.replace(event, scope=scope.key))
        return event

    async def accessed(
        self, chat_id: str | None, what: Access, fn: Callable[..., Awaitable[R]], *args: Any
    ) -> R:
        """`await fn(*args)` inside `access(chat_id, what)` (the same sync point; a
        recording takes it without context managers)."""
        if not self._recorder.enabled:
            return await fn(*args)
        scope = current_scope()
        if scope is None or (chat_id and scope.chat_id != chat_id):
            return await fn(*args)
        if self._player is not None:
            async with self.access(chat_id, what):
                return await fn(*args)
        mark = MarkEvent(seq=0, scope=scope.key, mark=what)
        return await self._recorded(scope, mark, fn, *args)

    @asynccontextmanager
    async def access(self, chat_id: str | None, what: Access) -> AsyncIterator[None]:
        """A unit reading or writing shared state (chat record, graph): a sync point, so a
        replay serialises these accesses across units exactly as recorded."""
        scope = current_scope()
        if not self._recorder.enabled or scope is None or (chat_id and scope.chat_id != chat_id):
            yield
            return
        mark = MarkEvent(seq=0, scope=scope.key, mark=what)
        async with self._ordered(scope, failures=True):
            try:
                yield
            except anyio.get_cancelled_exc_class():
                raise
            except Exception:
                self._recorder.emit(scope.chat_id, mark)  # a failed access is a sync point too
                raise
            self._recorder.emit(scope.chat_id, mark)

    async def _recorded(
        self, scope: Scope, mark: MarkEvent | None, fn: Callable[..., Awaitable[R]], *args: Any
    ) -> R:
        """`await fn(*args)` as one sync point of a recording: what `_ordered` does with no
        player (the chat's state lock, a turn's shield, its count and landing), as plain
        code, not two generator context managers (≈ 10 µs a sync point, ≈ 9 a turn).
        With `mark` (an `access`), a failure counts too, with `mark` emitted after it."""
        turn = is_turn_unit(scope.key)
        with anyio.CancelScope(shield=True) if turn else _NO_GUARD:
            async with self._state_lock(scope.chat_id):
                if mark is None:
                    result = await fn(*args)
                else:
                    try:
                        result = await fn(*args)
                    except anyio.get_cancelled_exc_class():
                        raise
                    except Exception:
                        self._recorder.emit(scope.chat_id, mark)  # counted, then raised
                        scope.syncs += 1
                        raise
                    self._recorder.emit(scope.chat_id, mark)
                n = scope.syncs  # a turn's ordinal names where an abort lands
                scope.syncs = n + 1
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
        player = self._player
        turn = is_turn_unit(scope.key)
        if player is not None:
            # Past where a recorded shutdown stopped the unit: held (and cancelled) here.
            await player.stop(scope.key, self._units.peek(scope.chat_id, scope.key, "sync"))
        # In a replay every unit's sync point is shielded: the recording shows this one
        # passed (a cancellation that came before it is held and delivered by `stop`), and
        # its gate and lock are waits the recording did not make.
        shielded = turn or player is not None
        with anyio.CancelScope(shield=True) if shielded else _NO_GUARD:
            if player is not None:
                await player.gate(scope.key, self._units.peek(scope.chat_id, scope.key, "sync"))
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
                    n = self._units.count(scope, "sync")
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

    async def _landing(self, scope: Scope, n: int) -> None:
        """Where a turn's cancellation takes effect (besides a model stream): right after
        its sync point `n`. Remembered for its checkpoint (`cut_after_sync`); a replay
        holds the turn here if its recording was cut here, until the replayed abort lands."""
        try:
            if self._player is None:
                await checkpoint_if_cancelled()
            else:
                # A replay lands a cancellation only where it landed when recorded: a turn
                # on its way there after the replay's shutdown passes the others.
                await self._player.landing(scope.key, n)
        except anyio.get_cancelled_exc_class():
            self._units.cut(scope.chat_id, scope.key, n)
            raise

    async def next_sync_turn(self) -> None:
        """Replay only: wait until the running unit's next sync point may pass. For code
        that takes a lock of its own right before a sync point (the graph view's refresh):
        a unit must not hold such a lock while its sync point waits for another unit's,
        which may be waiting for that lock (in the recording the lock was taken in trace
        order; in a replay whoever gets there first takes it)."""
        player = self._player
        scope = current_scope()
        if player is None or scope is None:
            return
        n = self._units.peek(scope.chat_id, scope.key, "sync")
        await player.stop(scope.key, n)  # as `_ordered`: a unit past its recorded end
        with anyio.CancelScope(shield=True):
            await player.gate(scope.key, n)

    def order_before_lock(self, view: LockOrdered) -> None:
        """In a replay, `view` (the shared graph view) waits for its unit's next sync
        point's turn before taking its lock."""
        if self._player is not None and self._recorder.enabled:
            view.before_lock = self.next_sync_turn

    # -- per-chat entries (see `Tracer.sweep`) -----------------------------------------

    def chats(self) -> set[str]:
        return set(self._state_locks)

    def idle(self, chat_id: str) -> bool:
        return not in_use(self._state_locks.get(chat_id))

    def forget(self, chat_id: str) -> None:
        self._state_locks.pop(chat_id, None)

    def entries(self) -> int:
        return len(self._state_locks)
