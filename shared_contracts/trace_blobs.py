"""Large repeated trace text stored once per chat trace, by content hash.

Every model call carries the whole transcript, so a trace storing each request in full
grows quadratically with the session. The writer (`backend.tracing.interner`: one
`Interner` per chat trace, fed events in trace order) stores, for a `ModelCallEvent`, the
run of messages it repeats from its role's previous call as a `MessageRun` (`reused`),
and each large part left (the tool
specs, a message's content or tool calls; a `PromptEvent`'s `system_prompt` and
`graph_context`) by its hash in `refs`, the part emptied; the first event of the trace that
needs a text carries it in `blobs`. `expand_blobs` (every reader that shows or compares
content) restores the full events; a trace written before blobs existed expands to itself.
`ModelCallEvent.request_hash` is always of the full request.

A call that streamed text only stores its chunks as two lists (`chunk_ms`, `chunk_texts`,
see `text_chunks`), not one `TimedChunk` each. A run of streamed `text_delta` frames of one
message is stored as one `OutboundFrameEvent` holding just the deltas (`delta_of`,
`deltas`; it spans one seq per frame): the frames are the deterministic msgspec encoding of
`TextDelta`, rebuilt on expansion (`delta_run`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import msgspec

from shared_contracts.frames import TextDelta
from shared_contracts.model_io import ModelMessage, ModelToolCall, ToolSpec
from shared_contracts.trace import (
    AnyTraceEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    TimedChunk,
)
from shared_contracts.trace_compat import typed_event

_ENCODE = msgspec.json.Encoder()
_TOOLS = msgspec.json.Decoder(list[ToolSpec])
_CALLS = msgspec.json.Decoder(list[ModelToolCall])
_PROMPT_FIELDS = ("system_prompt", "graph_context")


class MissingBlob(ValueError):
    """A trace refers to a text it never stored (the trace is corrupt)."""


def text_hash(text: str) -> str:
    """sha256 (32 hex) of a text's UTF-8 bytes: the key a blob is stored under."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def delta_run(
    seq: int, scope: str, turn: int, message_id: str, deltas: list[str]
) -> OutboundFrameEvent:
    """The stored form of `text_delta` frames of `message_id`, numbered from `seq`."""
    return OutboundFrameEvent(
        seq=seq, scope=scope, turn=turn, frame="", delta_of=message_id, deltas=deltas
    )


def width(event: AnyTraceEvent) -> int:
    """How many seqs a stored event spans (a delta run: one per frame; others: one)."""
    if isinstance(event, OutboundFrameEvent) and event.deltas:
        return len(event.deltas)
    return 1


def next_seq(events: list[AnyTraceEvent]) -> int:
    """The seq the next event appended to a stored trace holding `events` gets."""
    return events[-1].seq + width(events[-1]) if events else 0


def text_chunks(call: ModelCallEvent, ms: list[float], texts: list[str]) -> ModelCallEvent:
    """`call` with its text-only stream stored compactly (`chunk_ms`, `chunk_texts`)."""
    return msgspec.structs.replace(call, chunks=[], chunk_ms=ms, chunk_texts=texts)


def _timed_chunks(call: ModelCallEvent) -> ModelCallEvent:
    pairs = zip(call.chunk_ms, call.chunk_texts, strict=True)
    chunks = [TimedChunk(t_ms=t, text=x) for t, x in pairs]
    return msgspec.structs.replace(call, chunks=chunks, chunk_ms=[], chunk_texts=[])


def _delta_frames(run: OutboundFrameEvent) -> list[OutboundFrameEvent]:
    encode = _ENCODE.encode
    return [
        OutboundFrameEvent(
            seq=run.seq + i,
            scope=run.scope,
            turn=run.turn,
            frame=encode(TextDelta(message_id=run.delta_of, delta=delta)).decode(),
        )
        for i, delta in enumerate(run.deltas)
    ]


def expand_blobs(events: Iterable[AnyTraceEvent]) -> list[AnyTraceEvent]:
    """The events with every ref, reused run and delta run restored, and no `refs`/`blobs`/
    `reused`/`deltas` left, as if written before blobs existed (such a trace expands to
    itself); values an older recorder wrote as JSON text are in their typed fields
    (`trace_compat.typed_event`). Raises `MissingBlob` for a ref to a text, or a run of a
    call, the trace does not hold."""
    store: dict[str, str] = {}
    calls: dict[str, list[ModelMessage]] = {}
    out: list[AnyTraceEvent] = []
    for event in events:
        if isinstance(event, OutboundFrameEvent):
            if event.deltas:
                out.extend(_delta_frames(event))
            else:
                out.append(event)
            continue
        blobs = getattr(event, "blobs", None)
        if blobs:
            store.update(blobs)
        if isinstance(event, ModelCallEvent):
            if event.refs or event.blobs or event.reused:
                event = _expand_call(event, store, calls)
            if event.chunk_texts:
                event = _timed_chunks(event)
            calls[event.key] = event.request.messages
        elif isinstance(event, PromptEvent) and (event.refs or event.blobs):
            full = {name: _blob(store, key, event) for name, key in event.refs.items()}
            event = msgspec.structs.replace(event, refs={}, blobs={}, **full)
        out.append(typed_event(event))
    return out


def _blob(store: dict[str, str], key: str, event: AnyTraceEvent) -> str:
    try:
        return store[key]
    except KeyError:
        raise MissingBlob(f"trace event #{event.seq} refers to unstored text {key}") from None


def _expand_call(
    event: ModelCallEvent, store: dict[str, str], calls: dict[str, list[ModelMessage]]
) -> ModelCallEvent:
    request = event.request
    tools = request.tools
    parts: dict[int, dict[str, Any]] = {}
    for path, key in event.refs.items():
        text = _blob(store, key, event)
        if path == "tools":
            tools = _TOOLS.decode(text)
            continue
        _, index, name = path.split(".")
        value = text if name == "content" else _CALLS.decode(text)
        parts.setdefault(int(index), {})[name] = value
    messages = [
        msgspec.structs.replace(m, **parts[i]) if i in parts else m
        for i, m in enumerate(request.messages)
    ]
    run = event.reused
    if run is not None:
        if run.call not in calls:
            raise MissingBlob(f"trace event #{event.seq} reuses messages of unknown {run.call}")
        shared = calls[run.call][run.start : run.start + run.count]
        messages[run.at : run.at] = shared
    full = msgspec.structs.replace(request, tools=tools, messages=messages)
    return msgspec.structs.replace(event, request=full, refs={}, blobs={}, reused=None)
