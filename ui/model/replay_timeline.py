"""Trace events → the replay page's timeline: one row per event, filter chips by kind.

Every `AnyTraceEvent` variant has a row builder (`ROWS`); its detail is `replay_detail`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import Any

from shared_contracts.chat import UNTITLED, title_from
from shared_contracts.frames import Answer, UserMessage
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
    ToolRunEvent,
)
from ui.model.replay_decode import asked, client_frame, frame_type, quiz_outcome
from ui.model.replay_text import one_line

KINDS: tuple[tuple[str, str], ...] = (
    ("turn", "Turns"),
    ("prompt", "Prompts"),
    ("model", "Model calls"),
    ("tool", "Tools"),
    ("quiz", "Quizzes"),
    ("job", "Jobs"),
    ("extraction", "Extraction"),
    ("inbound", "Learner frames"),
    ("outbound", "Server frames"),
    ("checkpoint", "Checkpoints"),
    ("sync", "Clock, ids, reads"),
)
DEFAULT_KINDS = frozenset(k for k, _ in KINDS) - {"outbound", "sync"}
"""Shown at first: server frames (mostly token deltas) and sync points are noise until asked."""
TURN_MARKS = frozenset({"chat_created", "turn_started", "step"})


@dataclasses.dataclass
class TimelineRow:
    seq: int = 0
    kind: str = ""
    label: str = ""
    sub: str = ""
    scope: str = ""
    scope_head: bool = False
    """True on the first shown row of a run of one scope (the page prints the scope there)."""
    flag: str = ""
    """"error" when the event records a failure."""


@dataclasses.dataclass
class KindChip:
    key: str = ""
    label: str = ""
    count: int = 0
    active: bool = False


def event_kind(event: AnyTraceEvent) -> str:
    """The filter chip an event belongs to (one of `KINDS`)."""
    if isinstance(event, MarkEvent):
        return "turn" if event.mark in TURN_MARKS else "sync"
    return KIND_OF[type(event)]


KIND_OF: dict[type, str] = {
    InboundFrameEvent: "inbound",
    OutboundFrameEvent: "outbound",
    PromptEvent: "prompt",
    ModelCallEvent: "model",
    ToolRunEvent: "tool",
    QuizEvent: "quiz",
    JobTraceEvent: "job",
    ExtractionEvent: "extraction",
    ClockEvent: "sync",
    IdEvent: "sync",
    CheckpointEvent: "checkpoint",
}


def _mark_row(e: MarkEvent) -> tuple[str, str, str]:
    if e.mark == "chat_created":
        return f"Session created: {one_line(e.title)}", "", ""
    if e.mark == "turn_started":
        return f"Turn {e.turn} started", "", ""
    if e.mark == "step":
        return f"Teacher step {e.step}", f"turn {e.turn}", ""
    return f"{e.mark.replace('_', ' ')}", e.graph_hash[:12], ""


def _inbound_row(e: InboundFrameEvent) -> tuple[str, str, str]:
    text = ""
    frame = client_frame(e.frame)
    if isinstance(frame, UserMessage):
        text = frame.text
    elif isinstance(frame, Answer):
        text = str(frame.answer)
    return f"Learner: {frame_type(e.frame)}", one_line(text), ""


def _model_row(e: ModelCallEvent) -> tuple[str, str, str]:
    calls = len(e.response.tool_calls) if e.response else 0
    sub = f"{e.model} · {calls} tool call{'s' if calls != 1 else ''}"
    if e.finish_reason:
        sub += f" · {e.finish_reason}"
    if e.cancelled:
        sub += " · cancelled"
    return e.key, sub, "error" if e.error or e.cancelled else ""


def _tool_row(e: ToolRunEvent) -> tuple[str, str, str]:
    failed = bool(e.error) or not e.parsed
    return f"Tool {e.tool_name}", e.tool_call_id, "error" if failed else ""


def _quiz_row(e: QuizEvent) -> tuple[str, str, str]:
    sub = e.tool_call_id
    if e.phase == "issued" and (question := asked(e)):
        sub += f" · {one_line(question, 60)}"
    elif outcome := quiz_outcome(e):
        sub += f" · {outcome}"
    return f"Quiz {e.phase}", sub, ""


def _job_row(e: JobTraceEvent) -> tuple[str, str, str]:
    sub, flag = e.job_id, ""
    if e.phase == "finished" and (job := e.job) is not None:
        sub += f" · {job.kind} · {job.status}"
        flag = "error" if job.status == "failed" else ""
    elif e.before_call:
        sub += f" · before {e.before_call}"
    return f"Job {e.phase}", sub, flag


def _extraction_row(e: ExtractionEvent) -> tuple[str, str, str]:
    drops = len(e.gate_drops) + len(e.auditor_drops)
    sub = e.merge_diff or "no merge"
    if drops:
        sub += f" · {drops} dropped"
    return f"Extraction {e.run_id}", one_line(sub), ""


ROWS: dict[type, Callable[[Any], tuple[str, str, str]]] = {
    MarkEvent: _mark_row,
    InboundFrameEvent: _inbound_row,
    OutboundFrameEvent: lambda e: (f"Server: {frame_type(e.frame)}", f"turn {e.turn}", ""),
    PromptEvent: lambda e: (
        f"Prompt {e.template_id}",
        f"{e.template_hash} · graph context {len(e.graph_context)} chars",
        "",
    ),
    ModelCallEvent: _model_row,
    ToolRunEvent: _tool_row,
    QuizEvent: _quiz_row,
    JobTraceEvent: _job_row,
    ExtractionEvent: _extraction_row,
    ClockEvent: lambda e: ("Clock", e.value.isoformat(), ""),
    IdEvent: lambda e: (f"Id {e.prefix}", e.value, ""),
    CheckpointEvent: lambda e: (f"Checkpoint turn {e.turn}", e.transcript_hash[:12], ""),
}
"""One row builder per trace event type: (label, secondary text, flag)."""


def row(event: AnyTraceEvent) -> TimelineRow:
    """The timeline row of one event (KeyError for a type without a builder)."""
    label, sub, flag = ROWS[type(event)](event)
    return TimelineRow(
        seq=event.seq, kind=event_kind(event), label=label, sub=sub, scope=event.scope, flag=flag
    )


def ordered(events: Sequence[AnyTraceEvent]) -> list[AnyTraceEvent]:
    """Events by `seq` (the one writer's order)."""
    return sorted(events, key=lambda e: e.seq)


def timeline(events: Sequence[AnyTraceEvent], kinds: Collection[str]) -> list[TimelineRow]:
    """Rows of the events whose kind is in `kinds`, by seq; a scope heads each run of it."""
    rows: list[TimelineRow] = []
    scope = None
    for event in ordered(events):
        if event_kind(event) not in kinds:
            continue
        item = row(event)
        item.scope_head = item.scope != scope
        scope = item.scope
        rows.append(item)
    return rows


def chips(events: Sequence[AnyTraceEvent], kinds: Collection[str]) -> list[KindChip]:
    """One filter chip per kind, with how many events it holds and whether it is on."""
    tally = dict.fromkeys((k for k, _ in KINDS), 0)
    for event in events:
        tally[event_kind(event)] += 1
    return [KindChip(key=k, label=label, count=tally[k], active=k in kinds) for k, label in KINDS]


def session_title(events: Sequence[AnyTraceEvent]) -> str:
    """The session's title: the one it was created with, or (created untitled) the one the
    server gave it from the learner's first message — the trace records no rename."""
    created = next(
        (e.title for e in events if isinstance(e, MarkEvent) and e.mark == "chat_created"), ""
    )
    if created and created != UNTITLED:
        return created
    for event in events:
        if isinstance(event, InboundFrameEvent):
            frame = client_frame(event.frame)
            if isinstance(frame, UserMessage) and frame.text.strip():
                return title_from(frame.text)
    return created
