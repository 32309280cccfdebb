"""A session's trace as a client may see it: the open question's key withheld.

A trace is server-side: it holds every quiz's key, in the model's tool call (its response,
its streamed fragments, later requests repeating it), the tool run and the issued quiz
event. While a question is open, a client gets the trace with that question's arguments
replaced by their public view (what the learner was shown) everywhere they occur, and the
hashes computed over them (a request's, a checkpoint's transcript) withheld: a key with
few possible values could be found again by hashing each guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from backend.core.views import public_part
from shared_contracts.chat import ToolPart
from shared_contracts.model_io import ModelRequest, ModelToolCall
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ModelCallEvent,
    QuizEvent,
    TimedChunk,
    ToolRunEvent,
)

WITHHELD = "withheld: the question is open"
"""What stands in for a hash computed over the open question's key."""


def without_key(events: Sequence[AnyTraceEvent], question: ToolPart) -> list[AnyTraceEvent]:
    """`events` with the key of the open `question` (its tool part) withheld."""
    public = public_part(question).input
    if public == question.input:
        return list(events)  # nothing to withhold (a free-form question has no key)
    shown = msgspec.json.encode(public).decode()
    hider = _Hider(question.tool_call_id, public, shown)
    return [hider.event(event) for event in events]


class _Hider:
    def __init__(self, tool_call_id: str, public: dict[str, Any], shown: str) -> None:
        self.tool_call_id = tool_call_id
        self.public = public
        self.shown = shown
        self.asked = False
        """Whether the events so far include the question (later hashes cover its key)."""

    def event(self, event: AnyTraceEvent) -> AnyTraceEvent:
        if isinstance(event, ModelCallEvent):
            return self._call(event)
        if isinstance(event, ToolRunEvent) and event.tool_call_id == self.tool_call_id:
            return msgspec.structs.replace(event, raw_args=self.shown)
        if isinstance(event, QuizEvent) and event.tool_call_id == self.tool_call_id:
            return msgspec.structs.replace(event, input=self.public, detail="")
        if isinstance(event, CheckpointEvent) and self.asked:
            return msgspec.structs.replace(event, transcript_hash=WITHHELD)
        return event

    def _call(self, event: ModelCallEvent) -> ModelCallEvent:
        changes: dict[str, Any] = {}
        request = self._request(event.request)
        if request is not event.request:
            changes.update(request=request, request_hash=WITHHELD)
        response = event.response
        if response is not None and self._holds(response.tool_calls):
            changes["response"] = msgspec.structs.replace(
                response, tool_calls=self._calls(response.tool_calls)
            )
            changes["chunks"] = self._chunks(event.chunks)
            self.asked = True
        return msgspec.structs.replace(event, **changes) if changes else event

    def _request(self, request: ModelRequest) -> ModelRequest:
        if not any(self._holds(m.tool_calls) for m in request.messages):
            return request
        messages = [
            msgspec.structs.replace(m, tool_calls=self._calls(m.tool_calls))
            if self._holds(m.tool_calls)
            else m
            for m in request.messages
        ]
        return msgspec.structs.replace(request, messages=messages)

    def _holds(self, calls: Sequence[ModelToolCall]) -> bool:
        return any(call.id == self.tool_call_id for call in calls)

    def _calls(self, calls: Sequence[ModelToolCall]) -> list[ModelToolCall]:
        return [
            msgspec.structs.replace(call, arguments=self.shown)
            if call.id == self.tool_call_id
            else call
            for call in calls
        ]

    def _chunks(self, chunks: list[TimedChunk]) -> list[TimedChunk]:
        """The question's streamed argument fragments: the public arguments in its first,
        nothing in the rest."""
        index = next((c.tool_index for c in chunks if c.tool_id == self.tool_call_id), None)
        if index is None:
            return chunks
        out: list[TimedChunk] = []
        first = True
        for chunk in chunks:
            if chunk.tool_index == index:
                chunk = msgspec.structs.replace(chunk, arguments=self.shown if first else "")
                first = False
            out.append(chunk)
        return out
