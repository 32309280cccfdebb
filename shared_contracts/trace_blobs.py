"""Large repeated trace text stored once per chat trace, by content hash.

Every model call carries the whole transcript, so a trace storing each request in full
grows quadratically with the session. The writer's `Interner` (one per chat trace, fed
events in trace order) stores, for a `ModelCallEvent`, the run of messages it repeats from
its role's previous call as a `MessageRun` (`reused`), and each large part left (the tool
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
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from shared_contracts.frames import TextDelta
from shared_contracts.model_io import ModelMessage, ModelToolCall, ToolSpec
from shared_contracts.trace import (
    AnyTraceEvent,
    MessageRun,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    TimedChunk,
)

MIN_CHARS = 200
"""Shorter parts stay inline: a reference would save little."""

_ENCODE = msgspec.json.Encoder()
_TOOLS = msgspec.json.Decoder(list[ToolSpec])
_CALLS = msgspec.json.Decoder(list[ModelToolCall])
_PROMPT_FIELDS = ("system_prompt", "graph_context")


class MissingBlob(ValueError):
    """A trace refers to a text it never stored (the trace is corrupt)."""


def text_hash(text: str) -> str:
    """sha256 (32 hex) of a text's UTF-8 bytes: the key a blob is stored under."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class _Parts:
    """Collects one event's refs and the blobs it is the first to store."""

    def __init__(self, stored: set[int]) -> None:
        self.stored = stored
        self.refs: dict[str, str] = {}
        self.blobs: dict[str, str] = {}

    def take(self, path: str, text: str, key: str = "") -> bool:
        """Whether `text` (at `path`) is stored by reference (then the caller empties it);
        `key`, when given, is its `text_hash`."""
        if len(text) < MIN_CHARS:
            return False
        data = b""
        if not key:
            data = text.encode("utf-8")
            key = hashlib.sha256(data).hexdigest()[:32]
        if (number := int(key, 16)) not in self.stored:
            self.stored.add(number)
            # A non-ASCII text is stored as a copy: encoding a str attaches a UTF-8 copy
            # of it to the str for life, and this one may be a session's (its context).
            self.blobs[key] = text if text.isascii() else (data or text.encode()).decode()
        self.refs[path] = key
        return True


class Interner:
    """One chat trace's writer state: the blob hashes the trace holds, and each role's last
    call (its key and message hashes) whose messages a new call may reuse by `MessageRun`.
    Feed it every event in trace order; after a failed write, `forget` what it took."""

    def __init__(self, stored: Iterable[str] = ()) -> None:
        # The blob keys the trace holds, as numbers (half the memory of their hex text).
        self.stored: set[int] = {int(key, 16) for key in stored}
        # Per role, its last call's key and a fingerprint (8 bytes) of each message: a call
        # repeats most of the last one's messages (rebuilt as new objects), found by
        # fingerprint without encoding or hashing them, and holding none of their text.
        self.last: dict[str, tuple[str, array[int]]] = {}

    @classmethod
    def of(cls, events: Iterable[AnyTraceEvent]) -> Interner:
        """The state to go on appending to a trace that holds `events`."""
        found: set[str] = set()
        for event in events:
            blobs = getattr(event, "blobs", None)
            if blobs:
                found.update(blobs)
        return cls(found)

    def forget(self, events: Iterable[AnyTraceEvent]) -> None:
        """`events` (as interned) were not written: nothing may refer to what they stored."""
        for event in events:
            self.stored.difference_update(int(key, 16) for key in getattr(event, "blobs", ()))
        self.last.clear()

    def intern(self, event: AnyTraceEvent) -> AnyTraceEvent:
        """`event` with its large texts replaced by refs (other events unchanged)."""
        if isinstance(event, ModelCallEvent) and not (event.refs or event.reused):
            return self._call(event)
        if isinstance(event, PromptEvent) and not event.refs:
            parts = _Parts(self.stored)
            empty = {name: "" for name in _PROMPT_FIELDS if parts.take(name, getattr(event, name))}
            if not parts.refs:
                return event
            return msgspec.structs.replace(event, refs=parts.refs, blobs=parts.blobs, **empty)
        return event

    def _call(self, event: ModelCallEvent) -> ModelCallEvent:
        request = event.request
        prints = array("q", [_fingerprint(message) for message in request.messages])
        run = self._run(request.role, prints)
        self.last[request.role] = (event.key, prints)
        kept = list(request.messages)
        if run is not None:
            del kept[run.at : run.at + run.count]
        parts = _Parts(self.stored)
        tools = request.tools
        if tools and parts.take("tools", *_tools_text(tools)):
            tools = []
        messages: list[ModelMessage] = []
        for i, message in enumerate(kept):
            changes: dict[str, Any] = {}
            if parts.take(f"messages.{i}.content", message.content):
                changes["content"] = ""
            calls = message.tool_calls
            if calls and parts.take(f"messages.{i}.tool_calls", _ENCODE.encode(calls).decode()):
                changes["tool_calls"] = []
            messages.append(msgspec.structs.replace(message, **changes) if changes else message)
        if not parts.refs and run is None:
            return event
        stored = msgspec.structs.replace(request, tools=tools, messages=messages)
        return msgspec.structs.replace(
            event, request=stored, refs=parts.refs, blobs=parts.blobs, reused=run
        )

    def _run(self, role: str, prints: array[int]) -> MessageRun | None:
        """The longest run of this role's last call's messages that this call repeats at the
        same place, from its first message or its second (the system prompt may change)."""
        if role not in self.last:
            return None
        key, before = self.last[role]
        best: MessageRun | None = None
        for at in (0, 1):
            n = 0
            while at + n < min(len(before), len(prints)) and before[at + n] == prints[at + n]:
                n += 1
            if n and (best is None or n > best.count):
                best = MessageRun(call=key, start=at, count=n, at=at)
        return best


@dataclass(slots=True)
class _ToolsText:
    tools: tuple[ToolSpec, ...] = ()
    text: str = ""
    key: str = ""


_LAST_TOOLS = _ToolsText()
"""The last tool list seen (its very objects, held so their identity stays meaningful),
its JSON and that JSON's `text_hash`: every teacher call carries the same ≈ 7.5 KB of specs."""


def _tools_text(tools: list[ToolSpec]) -> tuple[str, str]:
    """The tool list's JSON and its `text_hash`, reused while the list holds the same
    objects (specs are frozen Structs, built once, and their schemas never edited)."""
    last = _LAST_TOOLS
    if len(last.tools) != len(tools) or any(
        a is not b for a, b in zip(last.tools, tools, strict=True)
    ):
        last.text = _ENCODE.encode(tools).decode()
        last.key = text_hash(last.text)
        last.tools = tuple(tools)
    return last.text, last.key


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


def _fingerprint(message: ModelMessage) -> int:
    """A 64-bit hash of every field of a message (they alone make its JSON). Two different
    messages share it with odds of about 2^-64: the stored call would then show the last
    call's message in its place (a replay is unaffected: it compares `request_hash`, taken
    of the full request)."""
    calls = tuple((c.id, c.name, c.arguments) for c in message.tool_calls)
    return hash((message.role, message.content, message.tool_call_id, calls))


def expand_blobs(events: Iterable[AnyTraceEvent]) -> list[AnyTraceEvent]:
    """The events with every ref, reused run and delta run restored, and no `refs`/`blobs`/
    `reused`/`deltas` left, as if written before blobs existed (such a trace expands to
    itself). Raises `MissingBlob` for a ref to a text, or a run of a call, the trace does
    not hold."""
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
        out.append(event)
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
