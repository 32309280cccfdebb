"""The per-frame path of streamed text: a turn's `text_deltas` pusher sends and records
exactly what awaiting the sink with each `TextDelta` does, and the WebSocket writer sends
on the server's own `send` under Litestar's pass-through wrappers."""

from __future__ import annotations

import msgspec
from litestar import WebSocket, websocket
from litestar.testing import create_test_client

from backend.server.hub import ChatHub
from backend.server.ws_send import PASS_THROUGH_SENDS, server_send
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.frames import Pong, TextDelta
from shared_contracts.trace import OutboundFrameEvent
from tests.fakes import MemoryChatStore, MemoryGraphStore, MemoryTraceStore

ENCODE = msgspec.json.Encoder()
TEXTS = ["Hi ", 'a "quoted" ', "naïve\n", "\\", "</script>", "\u2028", "😀", ""]


def _hub() -> tuple[ChatHub, MemoryTraceStore, Tracer]:
    traces = MemoryTraceStore()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0)
    return ChatHub(tracer), traces, tracer


def _queued(hub: ChatHub, chat_id: str) -> list[str]:
    (connection,) = hub._connections[chat_id]
    return list(connection._frames)


async def _stream(hub: ChatHub, fast: bool) -> None:
    """A turn's text in two runs (another frame between), the pusher or the awaited sink."""
    sink = hub.sink("chat-1")
    if fast:
        push = sink.text_deltas("m1")
        for text in TEXTS:
            push(text)
        await sink(Pong())
        push("after")
    else:
        for text in TEXTS:
            await sink(TextDelta(message_id="m1", delta=text))
        await sink(Pong())
        await sink(TextDelta(message_id="m1", delta="after"))


async def test_pushed_deltas_are_the_frames_and_trace_of_awaited_ones():
    results = []
    for fast in (False, True):
        hub, traces, tracer = _hub()
        hub.connect("chat-1")
        with entered("chat-1", "turn:1"):
            await _stream(hub, fast)
        await tracer.flush("chat-1")
        results.append((_queued(hub, "chat-1"), traces.events["chat-1"]))
    (slow_frames, slow_trace), (fast_frames, fast_trace) = results
    assert fast_frames == slow_frames
    assert fast_frames[0] == ENCODE.encode(TextDelta(message_id="m1", delta=TEXTS[0])).decode()
    assert fast_trace == slow_trace
    runs = [
        (e.scope, e.delta_of, e.deltas) for e in fast_trace if isinstance(e, OutboundFrameEvent)
    ]
    assert runs == [("turn:1", "m1", TEXTS), ("turn:1", "", []), ("turn:1", "m1", ["after"])]


async def test_a_flush_or_another_units_event_starts_a_new_run():
    hub, traces, tracer = _hub()
    with entered("chat-1", "turn:1"):
        push = hub.sink("chat-1").text_deltas("m1")
        push("a")
        await tracer.flush("chat-1")
        push("b")
        push("c")
        with entered("chat-1", "job:j1"):  # another unit's frame between two deltas
            hub.publish("chat-1", Pong())
        push("d")
    await tracer.flush("chat-1")
    stored = traces.events["chat-1"]
    assert [(e.scope, e.deltas) for e in stored] == [  # type: ignore[union-attr]
        ("turn:1", ["a"]),
        ("turn:1", ["b", "c"]),
        ("job:j1", []),
        ("turn:1", ["d"]),
    ]
    assert [e.seq for e in stored] == [0, 1, 3, 4]


async def test_a_disabled_tracer_records_nothing_and_frames_still_go_out():
    hub = ChatHub()
    hub.connect("chat-1")
    push = hub.sink("chat-1").text_deltas("m1")
    push("x")
    assert _queued(hub, "chat-1") == [ENCODE.encode(TextDelta(message_id="m1", delta="x")).decode()]


def test_the_writer_sends_on_the_servers_own_send_in_a_litestar_route():
    seen: list[tuple[str, str]] = []

    @websocket("/ws")
    async def handler(socket: WebSocket) -> None:
        await socket.accept()
        send = server_send(socket)
        seen.append((socket.send.__qualname__, send.__qualname__))
        await send({"type": "websocket.send", "text": "straight"})
        await socket.close()

    with create_test_client([handler]) as client, client.websocket_connect("/ws") as ws:
        assert ws.receive_text() == "straight"
    ((outer, inner),) = seen
    assert outer == PASS_THROUGH_SENDS[0]
    assert inner not in PASS_THROUGH_SENDS


def test_other_wrappers_are_left_in_place():
    async def custom(message: dict) -> None:
        return None

    class Socket:
        send = staticmethod(custom)

    assert server_send(Socket()) is custom  # type: ignore[arg-type]
