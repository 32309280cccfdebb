"""Comparing a replay with its recording (first divergence), and per-turn diffs of two
sessions (`harness replay diff`)."""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from backend.replay.divergence import Divergence, udiff
from backend.tracing.units import turn_of
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    ExtractionEvent,
    IdEvent,
    InboundFrameEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    ToolRunEvent,
)
from shared_contracts.trace_blobs import expand_blobs


@dataclass
class ReplayResult:
    chat_id: str
    compared: int = 0
    frames: int = 0
    checkpoints: int = 0
    divergence: Divergence | None = None
    fork_id: str = ""
    ends_inside_turn: int = 0
    """The turn the recording ends inside (the server stopped mid-turn), else 0."""
    shutdown_cut: list[str] = field(default_factory=list)
    """Units a recorded shutdown cut (the replay shut down at the same point and compared
    their cancellation paths too), in order."""
    events: list[AnyTraceEvent] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.divergence is None


_SKIP = (ClockEvent, IdEvent)


Slot = tuple[str, str, int]
"""An event's place for comparison: (unit, event type, ordinal of that type in the unit)."""


def _slots(events: Sequence[AnyTraceEvent]) -> dict[Slot, AnyTraceEvent]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out: dict[Slot, AnyTraceEvent] = {}
    for event in events:
        if isinstance(event, _SKIP):
            continue
        tag = type(event).__name__
        n = counts[(event.scope, tag)]
        counts[(event.scope, tag)] += 1
        out[(event.scope, tag, n)] = event
    return out


def _plain(event: AnyTraceEvent) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    data.pop("seq", None)
    if isinstance(event, ModelCallEvent):
        data.pop("chunks", None)  # timings; the content is in the response and the frames
    return data


def compare(
    recorded: Sequence[AnyTraceEvent],
    replayed: Sequence[AnyTraceEvent],
    runtime: Sequence[Divergence],
    result: ReplayResult,
    *,
    unrecorded: Collection[str] = (),
) -> None:
    """Fill `result` with counts and the first divergence (in recorded order). Model calls
    keyed in `unrecorded` were in flight when the recording ended (never written): the
    replay's event for one is not a divergence."""
    ours = _slots(replayed)
    theirs = _slots(recorded)
    found: list[Divergence] = list(runtime)
    for slot, event in theirs.items():
        result.compared += 1
        result.frames += isinstance(event, OutboundFrameEvent)
        result.checkpoints += isinstance(event, CheckpointEvent)
        other = ours.get(slot)
        if other is not None and _plain(other) == _plain(event):
            continue
        found.append(_divergence(slot, event, other))
    last_seq: dict[str, int] = {}
    for event in recorded:
        last_seq[event.scope] = event.seq
    for slot, event in ours.items():
        if isinstance(event, ModelCallEvent) and event.key in unrecorded:
            continue
        if slot not in theirs:
            seq = last_seq.get(slot[0], recorded[-1].seq if recorded else 0)
            found.append(_divergence(slot, None, event, seq=seq))
    if found:
        result.divergence = min(found, key=lambda d: d.seq)


def _divergence(
    slot: Slot,
    recorded: AnyTraceEvent | None,
    replayed: AnyTraceEvent | None,
    seq: int = 0,
) -> Divergence:
    scope, tag, n = slot
    where = f"{tag} #{n} of {scope}"
    left, right = _text(recorded), _text(replayed)
    if isinstance(recorded, PromptEvent) and isinstance(replayed, PromptEvent):
        diff = udiff(recorded.system_prompt, replayed.system_prompt, "system prompt")
        if recorded.template_hash != replayed.template_hash:
            old, new = recorded.template_hash, replayed.template_hash
            where += f" (template {recorded.template_id}: {old} → {new})"
    else:
        diff = udiff(left, right)
    return Divergence(recorded.seq if recorded is not None else seq, where, left, right, diff)


def _text(event: AnyTraceEvent | None) -> str:
    if event is None:
        return "(missing)"
    data = _plain(event)
    if isinstance(event, OutboundFrameEvent | InboundFrameEvent):
        data["frame"] = (
            json.loads(event.frame) if event.frame.strip().startswith("{") else event.frame
        )
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class TurnDigest:
    """What a turn did, for `diff`: prompt, tool calls, text, audit drops, graph."""

    prompt: str = ""
    tools: list[str] = field(default_factory=list)
    text: str = ""
    audits: list[str] = field(default_factory=list)
    graph: list[str] = field(default_factory=list)


def digest_turns(events: Sequence[AnyTraceEvent]) -> dict[int, TurnDigest]:
    """Per-turn digests; extraction runs count toward the last turn begun before them.
    `events` may be stored (interned) or expanded."""
    turns: dict[int, TurnDigest] = defaultdict(TurnDigest)
    current = 0
    for event in expand_blobs(events):
        turn = turn_of(event.scope) or current
        if isinstance(event, MarkEvent) and event.mark == "turn_started":
            current = turn = event.turn
        digest = turns[turn]
        if isinstance(event, PromptEvent):
            digest.prompt = event.system_prompt
        elif isinstance(event, ToolRunEvent):
            outcome = f" ! {event.error}" if event.error else ""
            digest.tools.append(f"{event.tool_name}({event.raw_args}){outcome}")
        elif isinstance(event, OutboundFrameEvent):
            frame = json.loads(event.frame)
            if frame.get("type") == "text_delta":
                digest.text += frame.get("delta", "")
        elif isinstance(event, ExtractionEvent):
            digest.audits.extend(f"gate drop {d}" for d in event.gate_drops)
            digest.audits.extend(f"auditor drop {d}" for d in event.auditor_drops)
            digest.graph.append(f"merge {event.merge_diff} → graph {event.graph_hash_after}")
        elif isinstance(event, CheckpointEvent):
            digest.graph.append(f"checkpoint graph {event.graph_hash} plan {event.plan_hash}")
    return dict(turns)


def diff_sessions(
    a: Sequence[AnyTraceEvent], b: Sequence[AnyTraceEvent], names: tuple[str, str] = ("A", "B")
) -> list[str]:
    """Readable per-turn differences between two traces (empty when the turns agree)."""
    left, right = digest_turns(a), digest_turns(b)
    out: list[str] = []
    for turn in sorted(set(left) | set(right)):
        x, y = left.get(turn, TurnDigest()), right.get(turn, TurnDigest())
        parts = []
        for label, p, q in (
            ("prompt", x.prompt, y.prompt),
            ("tool calls", "\n".join(x.tools), "\n".join(y.tools)),
            ("text", x.text, y.text),
            ("audit decisions", "\n".join(x.audits), "\n".join(y.audits)),
            ("graph", "\n".join(x.graph), "\n".join(y.graph)),
        ):
            if p != q:
                lines = difflib.unified_diff(
                    p.splitlines(),
                    q.splitlines(),
                    f"{names[0]} {label}",
                    f"{names[1]} {label}",
                    lineterm="",
                    n=1,
                )
                parts.append(f"  {label}:\n" + "\n".join("    " + line for line in lines))
        if parts:
            out.append(f"turn {turn}:")
            out.extend(parts)
    return out
