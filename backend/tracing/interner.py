"""The trace writer's interning: large repeated text stored once per chat trace, by
content hash, and a call's messages repeated from its role's last call stored as a run.

The stored form and its reader (`expand_blobs`) are the trace format, in
`shared_contracts.trace_blobs`; this is the writer's state.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable
from typing import Any

import msgspec

from shared_contracts.model_io import ModelMessage, ToolSpec
from shared_contracts.trace import AnyTraceEvent, MessageRun, ModelCallEvent, PromptEvent
from shared_contracts.trace_blobs import text_hash

MIN_CHARS = 200
"""Shorter parts stay inline: a reference would save little."""

_ENCODE = msgspec.json.Encoder()
_PROMPT_FIELDS = ("system_prompt", "graph_context")


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

    def __init__(self, stored: Iterable[str] = (), tools: ToolsText | None = None) -> None:
        self._tools = tools or ToolsText()
        # The blob keys the trace holds, as numbers (half the memory of their hex text).
        self.stored: set[int] = {int(key, 16) for key in stored}
        # Per role, its last call's key and a fingerprint (8 bytes) of each message: a call
        # repeats most of the last one's messages (rebuilt as new objects), found by
        # fingerprint without encoding or hashing them, and holding none of their text.
        self.last: dict[str, tuple[str, array[int]]] = {}

    @classmethod
    def of(cls, events: Iterable[AnyTraceEvent], tools: ToolsText | None = None) -> Interner:
        """The state to go on appending to a trace that holds `events`."""
        found: set[str] = set()
        for event in events:
            blobs = getattr(event, "blobs", None)
            if blobs:
                found.update(blobs)
        return cls(found, tools)

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
        if tools and parts.take("tools", *self._tools.of(tools)):
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


class ToolsText:
    """The last tool list seen (its very objects, held so their identity stays meaningful),
    its JSON and that JSON's `text_hash`: every teacher call carries the same ≈ 7.5 KB of
    specs. One per recorder, shared by its chats' interners."""

    def __init__(self) -> None:
        self._last: tuple[ToolSpec, ...] = ()
        self._text = ""
        self._key = ""

    def of(self, tools: list[ToolSpec]) -> tuple[str, str]:
        """The tool list's JSON and its `text_hash`, reused while the list holds the same
        objects (specs are frozen Structs, built once, and their schemas never edited)."""
        last = self._last
        if len(last) != len(tools) or any(a is not b for a, b in zip(last, tools, strict=True)):
            self._text = _ENCODE.encode(tools).decode()
            self._key = text_hash(self._text)
            self._last = tuple(tools)
        return self._text, self._key


def _fingerprint(message: ModelMessage) -> int:
    """A 64-bit hash of every field of a message (they alone make its JSON). Two different
    messages share it with odds of about 2^-64: the stored call would then show the last
    call's message in its place (a replay is unaffected: it compares `request_hash`, taken
    of the full request)."""
    calls = tuple((c.id, c.name, c.arguments) for c in message.tool_calls)
    return hash((message.role, message.content, message.tool_call_id, calls))
