"""Streamed text is stored compactly — a run of `text_delta` frames as one event, a
text-only model stream as two lists — and every reader still sees one event per frame
and a `TimedChunk` per chunk, exactly as the server sent and received them."""

from __future__ import annotations

import anyio
import msgspec

from backend.server.hub import ChatHub
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.frames import Pong, TextDelta
from shared_contracts.model_io import ModelRequest
from shared_contracts.trace import ModelCallEvent, OutboundFrameEvent, TimedChunk
from shared_contracts.trace_blobs import delta_run, expand_blobs, next_seq, text_chunks
from tests.fakes import (
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    text_reply,
    tool_reply,
)

ENCODE = msgspec.json.Encoder()


def _frames(events) -> list[str]:
    return [e.frame for e in expand_blobs(events) if isinstance(e, OutboundFrameEvent)]


def test_a_delta_run_expands_to_the_frames_sent_numbered_in_order():
    deltas = ["Hi ", 'a "quoted" ', "naïve\n", "\\"]
    run = delta_run(7, "turn:1", 1, "msg-1", deltas)
    expanded = expand_blobs([run])
    sent = [ENCODE.encode(TextDelta(message_id="msg-1", delta=d)).decode() for d in deltas]
    assert [e.frame for e in expanded] == sent  # type: ignore[union-attr]
    assert [e.seq for e in expanded] == [7, 8, 9, 10]
    assert all(e.scope == "turn:1" and not e.deltas for e in expanded)  # type: ignore[union-attr]
    assert next_seq([run]) == 11
    decoded = msgspec.json.decode(ENCODE.encode(run), type=OutboundFrameEvent)
    assert expand_blobs([decoded]) == expanded


def test_a_text_only_stream_expands_to_timed_chunks():
    request = ModelRequest(role="teacher", messages=[])
    call = ModelCallEvent(seq=0, key="k", model="m", request=request, request_hash="h")
    stored = text_chunks(call, [0.5, 1.25], ["a", "b"])
    (expanded,) = expand_blobs([stored])
    assert expanded.chunks == [TimedChunk(t_ms=0.5, text="a"), TimedChunk(t_ms=1.25, text="b")]  # type: ignore[union-attr]
    assert not expanded.chunk_texts and not expanded.chunk_ms  # type: ignore[union-attr]


async def test_deltas_of_one_unit_and_message_are_one_stored_event_until_something_else():
    traces = MemoryTraceStore()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0)
    hub = ChatHub(tracer)
    sink = hub.sink("chat-1")
    with entered("chat-1", "turn:1"):
        for text in ("a", "b", "c"):
            await sink(TextDelta(message_id="m1", delta=text))
        await sink(Pong())  # another frame ends the run
        await sink(TextDelta(message_id="m1", delta="d"))
        await sink(TextDelta(message_id="m2", delta="e"))  # another message: a new run

        async def child() -> None:  # another task is another unit
            await sink(TextDelta(message_id="m2", delta="f"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(child, name="helper")
    await tracer.flush("chat-1")
    stored = traces.events["chat-1"]
    runs = [(e.scope, e.delta_of, e.deltas) for e in stored if isinstance(e, OutboundFrameEvent)]
    assert runs == [
        ("turn:1", "m1", ["a", "b", "c"]),
        ("turn:1", "", []),
        ("turn:1", "m1", ["d"]),
        ("turn:1", "m2", ["e"]),
        ("turn:1~helper", "m2", ["f"]),
    ]
    expanded = expand_blobs(stored)
    assert [e.seq for e in expanded] == list(range(len(expanded)))
    assert len(_frames(stored)) == 7


async def test_a_traced_text_stream_is_stored_as_lists_and_read_back_as_chunks():
    traces = MemoryTraceStore()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0)
    model = tracer.model(ScriptedModel([text_reply("one two three")]))
    with entered("chat-1", "turn:1"):
        async for _ in model.stream(ModelRequest(role="teacher", messages=[])):
            pass
    await tracer.flush("chat-1")
    (call,) = traces.events["chat-1"]
    assert isinstance(call, ModelCallEvent) and call.chunk_texts and not call.chunks
    (full,) = expand_blobs([call])
    assert "".join(c.text for c in full.chunks) == "".join(call.chunk_texts)  # type: ignore[union-attr]
    assert all(c.t_ms == 0.0 for c in full.chunks)  # type: ignore[union-attr]


async def test_a_stream_with_tool_calls_keeps_a_timed_chunk_each_in_order():
    traces = MemoryTraceStore()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0)
    reply = tool_reply([("c1", "plan", {"goal": "g"})], text="Let me plan.")
    model = tracer.model(ScriptedModel([reply]))
    with entered("chat-1", "turn:1"):
        async for _ in model.stream(ModelRequest(role="teacher", messages=[])):
            pass
    await tracer.flush("chat-1")
    (call,) = traces.events["chat-1"]
    assert isinstance(call, ModelCallEvent) and not call.chunk_texts
    texts = [c.text for c in call.chunks if c.tool_index is None]
    assert "".join(texts) == "Let me plan." and any(c.tool_id == "c1" for c in call.chunks)
    assert expand_blobs([call]) == [call]
