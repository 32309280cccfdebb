"""The cassette of a strict replay: recorded values by unit and ordinal, the sync gate,
and the divergences it meets (with readable diffs)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

import anyio

from backend.replay.divergence import Divergence, request_text, udiff
from backend.replay.recording import (
    abort_frames,
    cancellations,
    fork_seq_of,
    in_flight_text,
    open_turn,
    recorded_config,
    timed_out,
)
from backend.replay.shutdown import shutdown_plan
from backend.tracing.hashing import request_hash
from backend.tracing.player import ReplayDivergence, is_sync
from backend.tracing.units import turn_of
from shared_contracts.model_io import ModelRequest
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    IdEvent,
    ModelCallEvent,
    TimedChunk,
)


class Cassette:
    """The replay's `Player` (`backend.tracing.player`): a recording's values by unit and
    ordinal, and the sync gate."""

    def __init__(self, events: Sequence[AnyTraceEvent], fork_turn: int | None = None) -> None:
        self.clocks: dict[tuple[str, int], datetime] = {}
        self.ids: dict[tuple[str, int], IdEvent] = {}
        self.calls: dict[str, ModelCallEvent] = {}
        self.sync_seqs: dict[str, list[int]] = defaultdict(list)
        self.first_seq: dict[str, int] = {}
        self.landings: dict[str, int] = {}
        """Turn unit → the sync point right after which its recorded abort landed."""
        self.divergences: list[Divergence] = []
        self.failed = anyio.Event()
        self.changed = anyio.Event()
        self.fork_turn = fork_turn
        self.fork_seq = fork_seq_of(events, fork_turn)
        self.pending = self._index(events)
        self._done: set[int] = set()
        self.closed = False
        self.aborts, self.shutdown_cuts = cancellations(events, self.fork_seq)
        self.timeouts = timed_out(events, self.fork_seq)
        """Job calls cut by the job's timeout (the job then failed, "timed out")."""
        for key in self.timeouts:
            self.shutdown_cuts.pop(key, None)
        self._reached: set[str] = set()
        self.ends_inside_turn = open_turn(events, self.fork_seq)
        """The turn the recording ends inside (the server stopped mid-turn), else 0."""
        self._tail = in_flight_text(events, self.ends_inside_turn)
        self.unrecorded: dict[str, ModelCallEvent] = {}
        """Calls the recording ends inside, never written: what the replay gives them."""
        self.held: set[str] = set()
        """Units held where their recording ends (a sync point or a call it never got past)."""
        self.shutdown = (
            shutdown_plan(
                events,
                recorded_config(events),
                self.shutdown_cuts,
                abort_frames(events),
                self.aborts,
            )
            if fork_turn is None
            else None
        )
        """The recorded shutdown the replay ends with (None: it ends when its events do)."""
        if self.shutdown is not None:
            self.landings.update(self.shutdown.landings)
        self.parked: dict[str, int] = {}
        """Units waiting at a sync point recorded after a cancellation path began."""

    def _index(self, events: Sequence[AnyTraceEvent]) -> list[tuple[int, str]]:
        """File the recorded values by unit and ordinal; the sync points, in recorded
        order, as (seq, unit)."""
        counts: dict[tuple[str, str], int] = defaultdict(int)
        pending: list[tuple[int, str]] = []
        for event in events:
            self.first_seq.setdefault(event.scope, event.seq)
            if isinstance(event, ClockEvent):
                self.clocks[(event.scope, counts[(event.scope, "clock")])] = event.value
                counts[(event.scope, "clock")] += 1
            elif isinstance(event, IdEvent):
                self.ids[(event.scope, counts[(event.scope, "id")])] = event
                counts[(event.scope, "id")] += 1
            elif isinstance(event, ModelCallEvent):
                self.calls[event.key] = event
            elif isinstance(event, CheckpointEvent) and event.cut_after_sync >= 0:
                self.landings[event.scope] = event.cut_after_sync
            if is_sync(event) and event.seq < self.fork_seq:
                self.sync_seqs[event.scope].append(event.seq)
                pending.append((event.seq, event.scope))
        return sorted(pending)

    def live(self, key: str) -> bool:
        if self.fork_turn is None:
            return False
        if key.startswith("turn:"):
            return turn_of(key) >= self.fork_turn
        first = self.first_seq.get(key)
        return first is None or first >= self.fork_seq

    def clock(self, key: str, n: int) -> datetime | None:
        value = self.clocks.get((key, n))
        if value is None:
            self._diverge(self._seq_near(key), f"{key}: clock value #{n}", "(recorded)", "")
        return value

    def id(self, key: str, n: int, prefix: str) -> str | None:
        event = self.ids.get((key, n))
        if event is None or event.prefix != prefix:
            recorded = f"{event.prefix}: {event.value}" if event else "(none)"
            seq = event.seq if event else self._seq_near(key)
            self._diverge(seq, f"{key}: id #{n}", recorded, f"a new {prefix!r} id")
            return None
        return event.value

    def call(self, key: str, request: ModelRequest) -> ModelCallEvent:
        recorded = self.calls.get(key) or self._in_flight(key, request)
        if recorded is None:
            self._diverge(self._seq_near(key), f"model call {key}", "(none)", request_text(request))
            raise ReplayDivergence(f"replay: no recorded model call {key}")
        if key not in self.unrecorded and recorded.request_hash != request_hash(request):
            self._diverge(
                recorded.seq,
                f"model call {key}: the request differs",
                request_text(recorded.request),
                request_text(request),
            )
            raise ReplayDivergence(f"replay: model call {key} diverged from the recording")
        return recorded

    async def gate(self, key: str, n: int) -> None:
        """Hold a unit's sync point `n` until every sync point recorded before it in other
        units has passed. A strict replay holds a unit for good at a sync point its
        recording never reached (the session was stopped there: a job cancelled at
        shutdown), until `close`."""
        seqs = self.sync_seqs.get(key, [])
        if n >= len(seqs):
            if self.fork_turn is None:
                self._hold(key)
            while self.fork_turn is None and not self.closed:
                await self.changed.wait()
            return
        target = seqs[n]
        if self._clear(key, target) or self.closed:
            return
        # Waiting for a cancellation path recorded before this point: it comes once the
        # replay has shut down, so the unit is as far as it can get before then.
        parked = self.shutdown is not None and target > self.shutdown.start
        if parked:
            self.parked[key] = self.parked.get(key, 0) + 1
            self._notify()
        try:
            while not self._clear(key, target) and not self.closed:
                await self.changed.wait()
        finally:
            if parked:
                self.parked[key] -= 1
                if not self.parked[key]:
                    del self.parked[key]

    async def cut(self, key: str) -> None:
        """Model call `key` has yielded every chunk it yielded when recorded, and was then
        cancelled: hold it until that cancellation lands (the replayed abort cancels the
        turn; a replay that ends first releases it as a divergence no one compares)."""
        self._reached.add(key)
        if key in self.timeouts:
            # Its job's timeout cut it: it times out here, not after the wall-clock budget
            # (the runner reports a `TimeoutError` as it does its `fail_after`'s).
            raise TimeoutError(f"replay: model call {key} timed out when recorded")
        if key in self.shutdown_cuts:
            self._hold(key.split("/")[0])  # no abort will come: the server stopped here
        self._notify()
        while not self.closed:
            await self.changed.wait()
        raise ReplayDivergence(f"replay over: model call {key} was cut when recorded")

    async def landing(self, key: str, n: int) -> None:
        """Unit `key` has passed its sync point `n` uncancelled: if its recorded abort (or
        the shutdown) took effect right there, hold it until the replayed one lands (or the
        replay ends)."""
        if self.landings.get(key) != n:
            return
        if self.shutdown is not None and key in self.shutdown.landings:
            self._hold(key)
        while not self.closed:
            await self.changed.wait()

    async def stop(self, key: str, n: int = -1, call: str = "", point: str = "") -> None:
        """Unit `key` is about to pass its sync point `n` (or make model call `call`; or as
        a job, reach `point`: "start", queueing for its slot, or "running", saving that
        state): if that is past where the recorded shutdown stopped it, hold it here — not
        shielded, so the replay's own shutdown cancels it right here, as the recording's
        did."""
        plan = self.shutdown
        if plan is None:
            return
        if point:
            past = key in (plan.queued if point == "start" else plan.started)
        elif call:
            # A cut job or extraction run stopped before this call (a turn's is a divergence).
            past = key in plan.units and not key.startswith("turn:") and call not in self.calls
        else:
            past = n >= len(self.sync_seqs.get(key, ()))
        if not past:
            return
        self._hold(key)
        while not self.closed:
            await self.changed.wait()

    def ready(self) -> bool:
        """Whether the replay may shut down as the recording did: every sync point recorded
        before the first cancellation path has passed and each cut unit is held at its cut."""
        plan = self.shutdown
        if plan is None:
            return False
        before = all(seq in self._done for seq, _ in self.pending if seq < plan.start)
        return before and plan.expect <= self.held | self.parked.keys()

    async def reached(self, key: str) -> None:
        """Until model call `key` waits at its recorded cut (see `cut`)."""
        while key not in self._reached and not self.closed:
            await self.changed.wait()

    def at_end(self) -> bool:
        """Whether the recording ends inside a turn and the replayed turn is held where it
        ends (it will emit nothing more that the recording holds)."""
        return bool(self.ends_inside_turn) and f"turn:{self.ends_inside_turn}" in self.held

    def _hold(self, unit: str) -> None:
        self.held.add(unit)
        self._notify()

    def _in_flight(self, key: str, request: ModelRequest) -> ModelCallEvent | None:
        """The call the recording ends inside — its unit's next call in the turn the server
        stopped in, never written — as far as the learner saw it: the text it streamed
        (the turn's `text_delta` frames after its last recorded call), then cut there."""
        unit, _, rest = key.partition("/")
        role, _, n = rest.rpartition("#")
        if not self.ends_inside_turn or unit != f"turn:{self.ends_inside_turn}":
            return None
        done = sum(1 for k in self.calls if k.startswith(f"{unit}/{role}#"))
        if n != str(done) or self._tail is None:
            return None
        seq, texts = self._tail
        call = ModelCallEvent(
            seq=seq,
            scope=unit,
            key=key,
            model="(not recorded)",
            request=request,
            request_hash=request_hash(request),
            chunks=[TimedChunk(t_ms=0.0, text=text) for text in texts],
            cancelled=True,
        )
        self.unrecorded[key] = call
        self.shutdown_cuts[key] = self.ends_inside_turn
        self._tail = None  # one call is in flight when a turn stops
        return call

    def close(self) -> None:
        """The replay is over: release every held unit (what it does next is not compared)."""
        self.closed = True
        self._notify()

    def passed(self, key: str, n: int) -> None:
        seqs = self.sync_seqs.get(key, [])
        if n < len(seqs):
            self._done.add(seqs[n])
            self._notify()

    def remaining(self) -> list[tuple[int, str]]:
        return [(s, k) for s, k in self.pending if s not in self._done]

    def _clear(self, key: str, target: int) -> bool:
        for seq, scope in self.pending:
            if seq >= target:
                return True
            if scope != key and seq not in self._done:
                return False
        return True

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _seq_near(self, key: str) -> int:
        return self.first_seq.get(key.split("/")[0], 0)

    def _diverge(self, seq: int, where: str, recorded: str, replayed: str) -> None:
        self.divergences.append(
            Divergence(seq, where, recorded, replayed, udiff(recorded, replayed))
        )
        self.failed.set()
        self._notify()
