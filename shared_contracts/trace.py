"""Trace events (`traces/<chat_id>.jsonl`): the raw material of deterministic replay.

Model calls are keyed by structure (`turn:7/teacher#0`, `job:<id>/#2`), not by order.
Large repeated text (system prompts, transcript messages, tool specs) is stored once per
trace by content hash: see `shared_contracts.trace_blobs` (`refs` and `blobs` below).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from shared_contracts.base import Id, Record
from shared_contracts.extraction import ExtractorOutput
from shared_contracts.jobs import Job
from shared_contracts.model_io import ModelMessage, ModelRequest, Usage
from shared_contracts.plan import PlanTree
from shared_contracts.tools import GradedOutput, ReplyOutput, ToolOutput


class TraceEvent(Record, tag_field="type", kw_only=True, frozen=True):
    seq: int
    scope: str = ""
    """The unit the event belongs to: `turn:3`, `job:<id>`, `extraction:<run>`, `learner`."""


class InboundFrameEvent(TraceEvent, tag="inbound", kw_only=True, frozen=True):
    turn: int
    frame: str
    """The learner's frame as received (raw JSON text)."""


class OutboundFrameEvent(TraceEvent, tag="outbound", kw_only=True, frozen=True):
    turn: int
    frame: str
    delta_of: str = ""
    """Set in the stored form of a run of `text_delta` frames of message `delta_of` (then
    `frame` is empty): frame i is `TextDelta(message_id=delta_of, delta=deltas[i])`, with
    seq `seq + i`. Readers see the expanded frames (`shared_contracts.trace_blobs`)."""
    deltas: list[str] = msgspec.field(default_factory=list)


class PromptEvent(TraceEvent, tag="prompt", kw_only=True, frozen=True):
    turn: int
    template_id: str
    template_hash: str
    graph_context: str
    system_prompt: str
    refs: dict[str, str] = msgspec.field(default_factory=dict)
    """Fields stored elsewhere by content hash (`system_prompt` → hash); each is empty here."""
    blobs: dict[str, str] = msgspec.field(default_factory=dict)
    """Texts this event stores first in its trace (hash → text); later events only refer."""


class TimedChunk(Record, kw_only=True, frozen=True):
    t_ms: float
    text: str = ""
    tool_index: int | None = None
    tool_id: str = ""
    tool_name: str = ""
    arguments: str = ""


class MessageRun(Record, kw_only=True, frozen=True):
    """Messages `start`..`start+count` of the earlier call `call` (by key), which belong at
    index `at` of this call's request (they are left out of its stored messages)."""

    call: str
    start: int
    count: int
    at: int


class ModelCallEvent(TraceEvent, tag="model_call", kw_only=True, frozen=True):
    key: str
    model: str
    request: ModelRequest
    request_hash: str
    chunks: list[TimedChunk] = msgspec.field(default_factory=list)
    response: ModelMessage | None = None
    finish_reason: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str = ""
    refs: dict[str, str] = msgspec.field(default_factory=dict)
    """Request parts stored elsewhere by content hash (`tools`, `messages.<i>.content`,
    `messages.<i>.tool_calls` → hash); each is empty in `request`. `request_hash` is of the
    full request."""
    blobs: dict[str, str] = msgspec.field(default_factory=dict)
    """Texts this event stores first in its trace (hash → text); later events only refer."""
    reused: MessageRun | None = None
    """The run of request messages shared with an earlier call (not stored again here)."""
    chunk_texts: list[str] = msgspec.field(default_factory=list)
    """Stored form of a call that streamed text only (then `chunks` is empty): chunk i is
    `TimedChunk(t_ms=chunk_ms[i], text=chunk_texts[i])`. Readers see `chunks`."""
    chunk_ms: list[float] = msgspec.field(default_factory=list)
    cancelled: bool = False
    """The call was cancelled (the learner's abort, a shutdown) after its `chunks`: its unit
    consumed exactly those, and the cancellation landed while it waited for the next one
    (a replay delivers it there). A trace written before this field marks such a call by
    having neither `response` nor `error`."""


class ToolRunEvent(TraceEvent, tag="tool_run", kw_only=True, frozen=True):
    """A tool call executed or refused: its arguments as the model sent them (`raw_args`,
    which may not even be JSON), its result or error, and a plan tool's tree before and
    after."""

    turn: int
    tool_call_id: str
    tool_name: str
    raw_args: str
    parsed: bool
    output: str = ""
    """Traces before `result`: its JSON (readers see `result`: `typed_event`)."""
    error: str = ""
    plan_before: str = ""
    """Traces before `tree_before`: its JSON (as `output`)."""
    plan_after: str = ""
    """Traces before `tree_after`: its JSON (as `output`)."""
    result: ToolOutput | None = None
    tree_before: PlanTree | None = None
    tree_after: PlanTree | None = None


QuizPhase = Literal["issued", "graded"]
JobPhase = Literal["submitted", "finished", "delivered"]


class QuizEvent(TraceEvent, tag="quiz", kw_only=True, frozen=True):
    """A question issued (its arguments, key included: a trace is server-side) or its
    answer recorded (graded, or a free-form reply)."""

    turn: int
    tool_call_id: str
    phase: QuizPhase
    detail: str = ""
    """Traces before `input`/`output`: their JSON (readers see them: `typed_event`)."""
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    """Issued: the question's arguments as the model sent them (a `QuizArgs` or an
    `AskUserArgs`, as the chat record's tool part holds them)."""
    output: GradedOutput | ReplyOutput | None = None
    """Graded: the answer and its verdict (a quiz), or the reply."""


class JobTraceEvent(TraceEvent, tag="job", kw_only=True, frozen=True):
    """A job submitted for a tool call, finished, or its result delivered to the teacher."""

    job_id: str
    phase: JobPhase
    turn: int = 0
    before_call: str = ""
    detail: str = ""
    """Traces before `tool_call_id`/`job`: the tool call id (submitted, delivered) or the
    finished job's JSON (readers see them: `typed_event`)."""
    tool_call_id: str = ""
    """Submitted, delivered: the job's tool call."""
    job: Job | None = None
    """Finished: the job as it ended."""


class ExtractionEvent(TraceEvent, tag="extraction", kw_only=True, frozen=True):
    run_id: str
    extractor_output: str = ""
    """Traces before `extraction`: its JSON (readers see `extraction`: `typed_event`)."""
    gate_drops: list[str] = msgspec.field(default_factory=list)
    auditor_drops: list[str] = msgspec.field(default_factory=list)
    merge_diff: str = ""
    graph_hash_before: str = ""
    graph_hash_after: str = ""
    extraction: ExtractorOutput | None = None
    """What the extractor proposed (before the gate and the auditor)."""


MarkKind = Literal[
    "chat_created", "turn_started", "step", "read", "write", "graph_read", "graph_write"
]
Access = Literal["read", "write", "graph_read", "graph_write"]
"""The marks of a unit's access to shared state (a chat record, the graph)."""


class MarkEvent(TraceEvent, tag="mark", kw_only=True, frozen=True):
    """A boundary: a chat created, a turn or a teacher step begun, or a unit reading or
    writing shared state (the chat record, the graph) — replay orders concurrent units by
    these. `graph_counts`/`graph_hash`: the graph ledgers then; `config`: each role's model
    and the thresholds a replay needs."""

    mark: MarkKind
    turn: int = 0
    step: int = 0
    title: str = ""
    at: datetime | None = None
    config: dict[str, str] = msgspec.field(default_factory=dict)
    graph_counts: dict[str, int] = msgspec.field(default_factory=dict)
    graph_hash: str = ""
    material_id: Id | msgspec.UnsetType = msgspec.UNSET
    """`chat_created`: the learner's document the chat teaches from (unset: none)."""


class ClockEvent(TraceEvent, tag="clock", kw_only=True, frozen=True):
    value: datetime


class IdEvent(TraceEvent, tag="id", kw_only=True, frozen=True):
    prefix: str
    value: str


class CheckpointEvent(TraceEvent, tag="checkpoint", kw_only=True, frozen=True):
    turn: int
    transcript_hash: str
    plan_hash: str
    graph_hash: str
    cut_after_sync: int = -1
    """The turn was cancelled (the learner's abort) and it took effect right after the
    turn unit's sync point #n (0-based): a replay delivers it there. -1: no cancellation
    landed at a sync point (none came, or it cut a model call: `ModelCallEvent.cancelled`)."""


AnyTraceEvent = (
    InboundFrameEvent
    | OutboundFrameEvent
    | PromptEvent
    | ModelCallEvent
    | ToolRunEvent
    | QuizEvent
    | JobTraceEvent
    | ExtractionEvent
    | MarkEvent
    | ClockEvent
    | IdEvent
    | CheckpointEvent
)
