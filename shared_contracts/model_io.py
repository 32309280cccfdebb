"""The ChatModel port's request and stream events (recorded verbatim in traces)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shared_contracts.base import Record

ModelRole = Literal["teacher", "researcher", "demo_builder", "visual_maker", "extractor", "auditor"]
FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]


class ModelToolCall(Record, kw_only=True, frozen=True):
    id: str
    name: str
    arguments: str
    """The raw JSON text the model produced; decoded strictly by the tool layer."""


class ModelMessage(Record, kw_only=True, frozen=True):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ModelToolCall] = msgspec.field(default_factory=list)
    tool_call_id: str = ""


class ToolSpec(Record, kw_only=True, frozen=True):
    name: str
    description: str
    parameters: dict[str, Any]


class ModelRequest(Record, kw_only=True, frozen=True):
    role: ModelRole
    messages: list[ModelMessage]
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    response_schema: dict[str, Any] | None = None
    """When set, the model must answer with one JSON object of this schema."""
    temperature: float | None = None
    max_tokens: int | None = None


class Usage(Record, kw_only=True, frozen=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class TextChunk(Record, tag_field="type", tag="text", kw_only=True, frozen=True):
    text: str


class ToolCallChunk(Record, tag_field="type", tag="tool_call", kw_only=True, frozen=True):
    """A fragment of a streamed tool call; id and name arrive with the first one."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


class ModelDone(Record, tag_field="type", tag="done", kw_only=True, frozen=True):
    """Always the last event of a successful call: the assembled message."""

    message: ModelMessage
    finish_reason: FinishReason = "stop"
    usage: Usage = msgspec.field(default_factory=Usage)


ModelEvent = TextChunk | ToolCallChunk | ModelDone
