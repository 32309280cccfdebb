"""WebSocket frames, both directions: tagged unions on "type"."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Body, Confidence, Inbound, ToolCallId
from shared_contracts.chat import ChatView, ToolPart
from shared_contracts.graph import GraphStats
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree
from shared_contracts.questions import PublicQuestion

MAX_INBOUND_FRAME_BYTES = 64 * 1024


class UserMessage(Inbound, tag_field="type", tag="user_message", kw_only=True, frozen=True):
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=16_000)]
    client_id: Annotated[str, msgspec.Meta(max_length=128)] | None = None


class Answer(Inbound, tag_field="type", tag="answer", kw_only=True, frozen=True):
    tool_call_id: ToolCallId
    answer: Annotated[str, msgspec.Meta(max_length=8000)] | float | list[str]
    confidence: Confidence | None = None


class Abort(Inbound, tag_field="type", tag="abort", kw_only=True, frozen=True):
    pass


class Ping(Inbound, tag_field="type", tag="ping", kw_only=True, frozen=True):
    pass


ClientFrame = UserMessage | Answer | Abort | Ping


class Snapshot(Body, tag_field="type", tag="snapshot", kw_only=True, frozen=True):
    chat: ChatView


class TurnStarted(Body, tag_field="type", tag="turn_started", kw_only=True, frozen=True):
    turn_id: int


class TextDelta(Body, tag_field="type", tag="text_delta", kw_only=True, frozen=True):
    message_id: str
    delta: str


class ToolCall(Body, tag_field="type", tag="tool_call", kw_only=True, frozen=True):
    message_id: str
    part: ToolPart


class ToolResult(Body, tag_field="type", tag="tool_result", kw_only=True, frozen=True):
    part: ToolPart


class Plan(Body, tag_field="type", tag="plan", kw_only=True, frozen=True):
    tree: PlanTree


class Question(Body, tag_field="type", tag="question", kw_only=True, frozen=True):
    tool_call_id: ToolCallId
    question: PublicQuestion


class VerdictFrame(Body, tag_field="type", tag="verdict", kw_only=True, frozen=True):
    tool_call_id: ToolCallId
    correct: bool
    expected: str
    feedback: str = ""


class JobFrame(Body, tag_field="type", tag="job", kw_only=True, frozen=True):
    job: Job


TurnFinishReason = Literal["stop", "awaiting_answer", "aborted", "error"]


class TurnFinished(Body, tag_field="type", tag="turn_finished", kw_only=True, frozen=True):
    turn_id: int
    reason: TurnFinishReason


class GraphUpdated(Body, tag_field="type", tag="graph_updated", kw_only=True, frozen=True):
    stats: GraphStats
    new_nodes: list[str] = msgspec.field(default_factory=list)


ErrorCode = Literal[
    "bad_frame",
    "too_large",
    "busy",
    "not_found",
    "rate_limited",
    "no_pending_question",
    "model_error",
    "step_limit",
    "storage_error",
    "internal",
]


class ErrorFrame(Body, tag_field="type", tag="error", kw_only=True, frozen=True):
    code: ErrorCode
    message: str


class Pong(Body, tag_field="type", tag="pong", kw_only=True, frozen=True):
    pass


ServerFrame = (
    Snapshot
    | TurnStarted
    | TextDelta
    | ToolCall
    | ToolResult
    | Plan
    | Question
    | VerdictFrame
    | JobFrame
    | TurnFinished
    | GraphUpdated
    | ErrorFrame
    | Pong
)
