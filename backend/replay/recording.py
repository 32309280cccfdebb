"""What a recording says about itself: its config, where the learner aborted and what
each abort cut, which calls a shutdown or a job's timeout cut, the turn it ends inside."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from backend.tracing.player import was_cancelled
from backend.tracing.units import is_abort, turn_of
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
)

NEVER = 1 << 62
"""A seq no event reaches."""


def recorded_config(events: Sequence[AnyTraceEvent]) -> dict[str, str]:
    """The recorded session's config (its first turn's)."""
    return next(
        (e.config for e in events if isinstance(e, MarkEvent) and e.mark == "turn_started"), {}
    )


def abort_frames(events: Sequence[AnyTraceEvent]) -> list[int]:
    return [e.seq for e in events if isinstance(e, InboundFrameEvent) and is_abort(e.frame)]


def fork_seq_of(events: Sequence[AnyTraceEvent], fork_turn: int | None) -> int:
    if fork_turn is None:
        return NEVER
    for event in events:
        if (
            isinstance(event, MarkEvent)
            and event.mark == "turn_started"
            and event.turn >= fork_turn
        ):
            return event.seq
    return NEVER


def cancellations(
    events: Sequence[AnyTraceEvent], fork_seq: int
) -> tuple[dict[int, str], dict[str, int]]:
    """Where each recorded cancellation came from: `aborts` maps a learner abort frame (by
    seq) to the model call it cut; `shutdown_cuts` maps a call cut with no abort to cut it
    (the server stopped mid-turn) to its turn. An abort cut the call of the turn it
    reached: the first abort frame recorded after the turn began and before the call's
    end, not already taken by an earlier cut."""
    aborts: dict[int, str] = {}
    shutdown: dict[str, int] = {}
    frames: list[int] = []
    started: dict[int, int] = {}
    for event in events:
        if event.seq >= fork_seq:
            break
        if isinstance(event, InboundFrameEvent) and is_abort(event.frame):
            frames.append(event.seq)
        elif isinstance(event, MarkEvent) and event.mark == "turn_started":
            started[event.turn] = event.seq
        elif isinstance(event, ModelCallEvent) and was_cancelled(event):
            begun = started.get(turn_of(event.scope), -1)
            mine = [s for s in frames if begun < s < event.seq and s not in aborts]
            if mine and turn_of(event.scope):
                aborts[mine[0]] = event.key
            else:
                shutdown[event.key] = turn_of(event.scope)
    return aborts, shutdown


def timed_out(events: Sequence[AnyTraceEvent], fork_seq: int) -> set[str]:
    """Keys of the job calls a job's timeout cut: the last cancelled call of each job whose
    recorded end is a failure "timed out"."""
    cut: dict[str, str] = {}
    timed_out: set[str] = set()
    for event in events:
        if event.seq >= fork_seq:
            break
        if isinstance(event, ModelCallEvent) and was_cancelled(event):
            if event.scope.startswith("job:"):
                cut[event.scope.removeprefix("job:")] = event.key
        elif (
            isinstance(event, JobTraceEvent)
            and event.job is not None
            and event.job.error.startswith("timed out")
        ):
            timed_out.add(event.job_id)
    return {key for job, key in cut.items() if job in timed_out}


def open_turn(events: Sequence[AnyTraceEvent], fork_seq: int) -> int:
    """The last turn begun and never checkpointed (the recording ends inside it), else 0."""
    last, checkpointed = 0, set()
    for event in events:
        if event.seq >= fork_seq:
            break
        if isinstance(event, MarkEvent) and event.mark == "turn_started":
            last = event.turn
        elif isinstance(event, CheckpointEvent):
            checkpointed.add(event.turn)
    return last if last and last not in checkpointed else 0


def in_flight_text(events: Sequence[AnyTraceEvent], turn: int) -> tuple[int, list[str]] | None:
    """(a seq for it, the streamed texts) of the call turn `turn` was in when the recording
    ended: the unit's `text_delta` frames after its last recorded call."""
    if not turn:
        return None
    unit = f"turn:{turn}"
    texts: list[str] = []
    seq = 0
    for event in events:
        if event.scope != unit:
            continue
        seq = event.seq
        if isinstance(event, ModelCallEvent):
            texts = []
        elif isinstance(event, OutboundFrameEvent) and '"text_delta"' in event.frame:
            frame = msgspec.json.decode(event.frame)
            texts.append(frame.get("delta", "") if isinstance(frame, dict) else "")
    return seq, texts
