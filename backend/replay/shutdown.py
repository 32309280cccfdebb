"""Where a recorded shutdown stopped each unit, so a replay can shut down at the same point.

A recorder that writes a shutdown's cancellation paths in full (its `config` says so:
`backend.tracing.player.SHUTDOWN_KEY`) leaves, for every unit the shutdown cut, the events it
recorded before the cut and then its cancellation path (a job: its `finished_at` clock and
the write settling its part; a turn: its last write, checkpoint and `turn_finished`). The
cut is where the unit then was:
- a turn: in a model stream (a call `cancelled` with no abort frame to cut it), right after
  one of its sync points (`CheckpointEvent.cut_after_sync`, no abort frame in the turn), or
  right after it began (`turn_started` and no checkpoint: its opening never ran);
- a job with no `finished` event: in a model stream (a cancelled call), before it started
  (one clock: its cancellation's; held before it queues for a slot), after it started and
  before any call (two clocks; held as it saves its `running` state), or before its next
  model call;
- an extraction run with no `ExtractionEvent`: in a stream, or before its next call.
A replay holds each such unit there (a cut call, a landing, a call or sync point past its
recording), lets every sync point recorded before the first cancellation path pass, then
cancels its own services: each held unit takes its recorded cancellation path.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from backend.tracing.player import SHUTDOWN_KEY, SHUTDOWN_RECORDED, is_sync
from backend.tracing.units import is_abort, is_session_end, is_turn_unit, turn_of
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    ExtractionEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
)

NEVER = 1 << 62


@dataclass
class ShutdownPlan:
    """A recorded shutdown: the units it cut and where the replay shuts down."""

    start: int = NEVER
    """Seq of the first event of any cancellation path: every sync point recorded before
    it passes before the replay shuts down."""
    units: set[str] = field(default_factory=set)
    """Units the shutdown cut: a call or sync point past their recording holds them."""
    expect: set[str] = field(default_factory=set)
    """Units a replay must find held at their cut before it shuts down."""
    queued: set[str] = field(default_factory=set)
    """Jobs the shutdown cancelled before they started (queued for a slot, or not yet
    run): a replay holds each before it queues."""
    started: set[str] = field(default_factory=set)
    """Jobs the shutdown cancelled after they started and before any model call (two
    clocks: their start's and their cancellation's): held as they save that state."""
    landings: dict[str, int] = field(default_factory=dict)
    """Turn → the sync point right after which the shutdown cut it (not the learner's
    abort)."""


def shutdown_plan(
    events: Sequence[AnyTraceEvent],
    config: Mapping[str, str],
    shutdown_cuts: Mapping[str, int],
    abort_frames: Sequence[int],
    aborts: Mapping[int, str],
) -> ShutdownPlan | None:
    """The plan of a recording whose shutdown paths were recorded in full and that a
    shutdown cut (None otherwise: an older trace, or nothing was running).
    `shutdown_cuts`: calls cancelled with no abort; `abort_frames`: seqs of the learner's
    abort frames; `aborts`: those of them that cut a call."""
    if config.get(SHUTDOWN_KEY) != SHUTDOWN_RECORDED:
        return None
    units: dict[str, list[AnyTraceEvent]] = defaultdict(list)
    for event in events:
        units[event.scope].append(event)
    finished = {e.job_id for e in events if isinstance(e, JobTraceEvent) and e.phase == "finished"}
    free_aborts = [s for s in abort_frames if s not in aborts]
    started = {
        e.turn: e.seq for e in events if isinstance(e, MarkEvent) and e.mark == "turn_started"
    }
    if not _complete(units, finished):
        return None  # cut short (the process died): replayed up to where it ends
    # A chat runs one turn at a time: only its last can have been running at the shutdown
    # (an earlier turn's cut is an abort, whose frame may have come before it began).
    last = f"turn:{max(started, default=0)}"
    plan = ShutdownPlan()
    for key, mine in units.items():
        if is_turn_unit(key) and key != last:
            continue
        cut = next(
            (e for e in mine if isinstance(e, ModelCallEvent) and e.key in shutdown_cuts), None
        )
        if cut is not None:
            plan.units.add(key)
            plan.expect.add(key)
            plan.start = min(plan.start, cut.seq)
        elif is_turn_unit(key):
            _turn(plan, key, mine, _claimed(events, started.get(turn_of(key), -1)), free_aborts)
        elif key.startswith("job:") and key.removeprefix("job:") not in finished:
            clocks = [e for e in mine if isinstance(e, ClockEvent)]
            plan.units.add(key)
            if clocks:
                plan.start = min(plan.start, clocks[-1].seq)
            plan.expect.add(key)
            if len(clocks) < 2:
                plan.queued.add(key)  # its one clock is its cancellation's
            elif len(clocks) == 2 and not any(isinstance(e, ModelCallEvent) for e in mine):
                plan.started.add(key)
        elif key.startswith("extraction:") and not any(
            isinstance(e, ExtractionEvent) for e in mine
        ):
            # A run (`extraction:<id>`) that never merged. The bare `extraction` unit is the
            # trigger's checks, which end without an `ExtractionEvent` whenever they start
            # no run: counting it named every extraction a shutdown cut.
            plan.units.add(key)
    return plan if plan.units else None


def _claimed(events: Sequence[AnyTraceEvent], begun: int) -> int:
    """A seq before which no abort frame can have reached the turn begun at `begun`: its
    claim (by the learner frame that started it, or after the turn before it ended)."""
    claimed = -1
    for event in events:
        if event.seq >= begun:
            break
        if isinstance(event, CheckpointEvent) or (
            isinstance(event, InboundFrameEvent)
            and not is_abort(event.frame)
            and not is_session_end(event.scope)  # the flush claims no turn
        ):
            claimed = event.seq
    return claimed


def _complete(units: Mapping[str, list[AnyTraceEvent]], finished: set[str]) -> bool:
    """Whether every unit's recording ends where a shutdown leaves it: each turn begun is
    checkpointed (or was cut right after it began) and each unfinished job settled its
    part (its last events: its cancellation's clock, then a write)."""
    for key, mine in units.items():
        if is_turn_unit(key):
            if not any(isinstance(e, CheckpointEvent) for e in mine) and len(mine) > 1:
                return False
        elif key.startswith("job:") and key.removeprefix("job:") not in finished:
            tail = mine[-2:]
            if not (
                len(tail) == 2
                and isinstance(tail[0], ClockEvent)
                and isinstance(tail[1], MarkEvent)
                and tail[1].mark == "write"
            ):
                return False
    return True


def _turn(
    plan: ShutdownPlan,
    key: str,
    mine: list[AnyTraceEvent],
    claimed: int,
    free_aborts: Sequence[int],
) -> None:
    checkpoint = next((e for e in mine if isinstance(e, CheckpointEvent)), None)
    if checkpoint is None:
        if [getattr(e, "mark", "") for e in mine] == ["turn_started"]:
            # Cut right after it began (its opening is shielded): no turn, no checkpoint.
            plan.units.add(key)
            plan.expect.add(key)
            plan.landings[key] = 0
        return
    if checkpoint.cut_after_sync < 0:
        return
    if any(claimed < s < checkpoint.seq for s in free_aborts):
        return  # the learner's abort (sent once the turn was claimed) landed there
    plan.units.add(key)
    plan.expect.add(key)
    plan.landings[key] = checkpoint.cut_after_sync
    syncs = 0
    for n, event in enumerate(mine):
        if is_sync(event):
            if syncs == checkpoint.cut_after_sync:
                if n + 1 < len(mine):
                    plan.start = min(plan.start, mine[n + 1].seq)
                return
            syncs += 1
