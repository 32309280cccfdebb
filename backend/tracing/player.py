"""What a replay plugs into the tracer: a `Player` answers recorded values and gates sync
points; the recorded events that order units (`is_sync`) and how a call is replayed."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, cast

from backend.core.errors import ModelError
from shared_contracts.model_io import (
    FinishReason,
    ModelDone,
    ModelEvent,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
)
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ExtractionEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
)

SYNC_TYPES = (
    MarkEvent,
    JobTraceEvent,
    ExtractionEvent,
    CheckpointEvent,
    InboundFrameEvent,
)
"""Events replay uses to order concurrent units (every other event is ordered by its unit)."""

SHUTDOWN_KEY = "shutdown_paths"
SHUTDOWN_RECORDED = "recorded"
"""`config[SHUTDOWN_KEY] == SHUTDOWN_RECORDED`: the recorder wrote a shutdown's
cancellation paths in full (every unit's last events), so a replay of it shuts down where
the recording did (`backend.replay.shutdown`)."""


class ReplayDivergence(ModelError):
    """A replayed model call the recording cannot answer (ends the turn like a model error)."""


class Player(Protocol):
    """What a replay supplies: recorded values by structural key, and the sync gate."""

    def live(self, key: str) -> bool: ...
    def clock(self, key: str, n: int) -> datetime | None: ...
    def id(self, key: str, n: int, prefix: str) -> str | None: ...
    def call(self, key: str, request: ModelRequest) -> ModelCallEvent: ...
    async def gate(self, key: str, n: int) -> None: ...
    async def cut(self, key: str) -> None: ...
    async def landing(self, key: str, n: int) -> None: ...
    async def stop(self, key: str, n: int = -1, call: str = "", point: str = "") -> None: ...
    def passed(self, key: str, n: int) -> None: ...


def is_sync(event: AnyTraceEvent) -> bool:
    """Whether `event` is a sync point (recorded through `SyncOrder.sync`)."""
    if isinstance(event, MarkEvent):
        return event.mark != "chat_created"
    return isinstance(event, SYNC_TYPES)


def was_cancelled(call: ModelCallEvent) -> bool:
    """Whether a recorded call was cancelled mid-stream (`cancelled`, or in a trace from
    before that field: neither a response nor an error)."""
    return call.cancelled or (call.response is None and not call.error)


def replay_events(call: ModelCallEvent) -> list[ModelEvent]:
    """The events a recorded call yielded: its chunks, then its `ModelDone` (if it had one)."""
    events: list[ModelEvent] = []
    for chunk in call.chunks:
        if chunk.tool_index is None:
            events.append(TextChunk(text=chunk.text))
        else:
            events.append(
                ToolCallChunk(
                    index=chunk.tool_index,
                    id=chunk.tool_id,
                    name=chunk.tool_name,
                    arguments=chunk.arguments,
                )
            )
    if call.response is not None:
        events.append(
            ModelDone(
                message=call.response,
                finish_reason=cast(FinishReason, call.finish_reason or "stop"),
                usage=call.usage,
            )
        )
    return events
