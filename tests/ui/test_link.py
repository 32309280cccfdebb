"""The classroom socket loop: typed decoding, delta batching, reconnect, stop on request."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

from shared_contracts.frames import (
    ErrorFrame,
    Snapshot,
    TextDelta,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from tests.ui.samples import chat_view, quiz_part
from ui.link import NOT_ALLOWED, NOT_FOUND, Timing, decode, run_link
from ui.settings import WS_MAX_SIZE

ENC = msgspec.json.Encoder()


class FakeSocket:
    """Serves scripted frames (`pace` seconds apart), then (optionally) waits forever;
    records what was sent."""

    def __init__(self, frames: list[bytes], hang: bool = False, pace: float = 0.0):
        self.frames = list(frames)
        self.hang = hang
        self.pace = pace
        self.sent: list[str] = []

    async def recv(self) -> bytes:
        from websockets.exceptions import ConnectionClosedOK

        if self.frames:
            if self.pace:
                await asyncio.sleep(self.pace)
            return self.frames.pop(0)
        if self.hang:
            await asyncio.sleep(3600)
        raise ConnectionClosedOK(None, None)

    async def send(self, data: str) -> None:
        self.sent.append(data)


class FakeConnect:
    """Stands in for websockets' `connect`: one socket per attempt, or an OSError."""

    def __init__(self, attempts: list[FakeSocket | Exception]):
        self.attempts = list(attempts)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, url: str, **kwargs: Any):
        self.calls.append({"url": url, **kwargs})
        attempt = self.attempts.pop(0)

        class _Ctx:
            async def __aenter__(self):
                if isinstance(attempt, Exception):
                    raise attempt
                return attempt

            async def __aexit__(self, *exc):
                return None

        return _Ctx()


class Recorder:
    def __init__(self, stop_after: int):
        self.batches: list[list[Any]] = []
        self.statuses: list[str] = []
        self.stop_after = stop_after

    async def apply(self, frames: list[Any], connection: Any) -> bool:
        if frames:
            self.batches.append(frames)
        if connection is not None:
            self.statuses.append(connection)
        return sum(len(b) for b in self.batches) < self.stop_after

    async def on_error(self, message: str) -> None:
        self.statuses.append(f"error:{message}")


def test_decode_turns_garbage_into_an_error_frame():
    frame = decode(b'{"type": "nope"}')
    assert isinstance(frame, ErrorFrame) and frame.code == "bad_frame"
    assert isinstance(decode(ENC.encode(TurnFinished(turn_id=1, reason="stop"))), TurnFinished)


async def test_deltas_are_batched_and_other_frames_flush_at_once(monkeypatch):
    monkeypatch.setenv("LH_API_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("LH_API_TOKEN", "tok")
    frames = [ENC.encode(Snapshot(chat=chat_view()))]
    frames += [ENC.encode(TextDelta(message_id="m", delta=str(i))) for i in range(20)]
    frames += [ENC.encode(TurnFinished(turn_id=1, reason="stop"))]
    socket = FakeSocket(frames, hang=True, pace=0.002)
    connect = FakeConnect([socket])
    rec = Recorder(stop_after=22)
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=connect,
        timing=Timing(flush=10.0, quiet=0.0, idle=0.05),
    )
    sizes = [len(b) for b in rec.batches]
    assert sizes == [1, 21]  # the snapshot alone; 20 deltas held back until the turn ended
    call = connect.calls[0]
    assert call["url"] == "ws://127.0.0.1:9/api/chats/chat-1/ws?limit=20"  # the latest page
    assert call["additional_headers"] == {"Authorization": "Bearer tok"}
    assert call["max_size"] == WS_MAX_SIZE and call["max_size"] > 2**20
    assert rec.statuses[:2] == ["connecting", "connected"]


async def test_a_first_token_shows_at_once_and_the_next_ones_wait_for_the_interval():
    frames = [ENC.encode(TextDelta(message_id="m", delta=str(i))) for i in range(5)]
    rec = Recorder(stop_after=5)
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=FakeConnect([FakeSocket(frames, hang=True, pace=0.002)]),
        timing=Timing(flush=0.3, idle=0.05),
    )
    assert [len(b) for b in rec.batches] == [1, 4]


async def test_a_frame_other_than_a_delta_is_applied_at_once_with_the_deltas_before_it():
    frames = [ENC.encode(Snapshot(chat=chat_view()))]
    frames += [ENC.encode(TextDelta(message_id="m", delta=str(i))) for i in range(3)]
    frames += [ENC.encode(TurnFinished(turn_id=1, reason="stop"))]
    rec = Recorder(stop_after=5)
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=FakeConnect([FakeSocket(frames, hang=True)]),
        timing=Timing(flush=10.0, quiet=0.0, idle=0.05),
    )
    assert [len(b) for b in rec.batches] == [1, 4]


async def test_a_verdict_is_applied_with_the_turn_start_before_it_and_the_frames_sent_with_it():
    """One redraw for an answer's turn start, verdict and tool result (the browser redraws
    each batch: a verdict queued behind the status line's redraw waited for it)."""
    frames = [
        ENC.encode(TurnStarted(turn_id=2)),
        ENC.encode(VerdictFrame(tool_call_id="q", correct=True, expected="b", feedback="Yes.")),
        ENC.encode(ToolResult(part=quiz_part())),
        ENC.encode(TextDelta(message_id="m", delta="next")),
    ]
    rec = Recorder(stop_after=4)
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=FakeConnect([FakeSocket(frames, hang=True, pace=0.005)]),
        timing=Timing(flush=10.0, hold=10.0, quiet=0.1, idle=0.05),
    )
    assert [[type(f) for f in b] for b in rec.batches] == [
        [TurnStarted, VerdictFrame, ToolResult, TextDelta]  # the delta came within `quiet`
    ]


async def test_a_turn_start_waits_for_its_first_token_but_not_longer_than_the_hold():
    rec = Recorder(stop_after=3)
    frames = [ENC.encode(TurnStarted(turn_id=1)), ENC.encode(TextDelta(message_id="m", delta="a"))]
    lone = [ENC.encode(TurnStarted(turn_id=2))]
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=FakeConnect([FakeSocket(frames, pace=0.02), FakeSocket(lone, hang=True)]),
        timing=Timing(flush=10.0, hold=0.2, quiet=0.0, idle=0.05),
        backoff=(0.01,),
    )
    assert [[type(f) for f in b] for b in rec.batches] == [
        [TurnStarted, TextDelta],  # the first token 20 ms later: drawn with the status line
        [TurnStarted],  # nothing followed: applied once the hold ran out
    ]


async def test_reconnects_with_backoff_after_a_drop_and_refusal():
    first = FakeSocket([ENC.encode(TurnFinished(turn_id=1, reason="stop"))])
    second = FakeSocket([ENC.encode(Snapshot(chat=chat_view()))], hang=True)
    connect = FakeConnect([first, OSError("refused"), second])
    rec = Recorder(stop_after=2)
    await run_link(
        "chat-1",
        asyncio.Queue(),
        rec.apply,
        rec.on_error,
        connect=connect,
        timing=Timing(idle=0.05),
        backoff=(0.01,),
    )
    assert len(connect.calls) == 3
    assert "reconnecting" in rec.statuses
    assert isinstance(rec.batches[-1][0], Snapshot)


async def test_queued_client_frames_are_sent_on_the_socket():
    socket = FakeSocket([], hang=True)
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    queue.put_nowait(b'{"type":"ping"}')
    ticks = 0

    async def apply(frames, connection):
        nonlocal ticks
        ticks += 1
        return ticks < 4

    await run_link(
        "chat-1",
        queue,
        apply,
        Recorder(0).on_error,
        connect=FakeConnect([socket]),
        timing=Timing(idle=0.02),
    )
    assert socket.sent == ['{"type":"ping"}']


def refused(status: int) -> InvalidStatus:
    return InvalidStatus(Response(status, "refused", Headers(), b""))


@pytest.mark.parametrize(
    ("handshake", "api_says", "message"),
    [
        (403, 404, NOT_FOUND),  # a missing chat's handshake is refused with 403 too
        (403, 403, NOT_ALLOWED),
        (401, 401, NOT_ALLOWED),
        (404, 200, NOT_FOUND),
    ],
)
async def test_a_refused_handshake_says_why_and_stops(handshake, api_says, message):
    asked: list[str] = []

    async def status_of(chat_id: str) -> int:
        asked.append(chat_id)
        return api_says

    connect = FakeConnect([refused(handshake)])
    rec = Recorder(stop_after=1)
    await run_link(
        "chat-gone", asyncio.Queue(), rec.apply, rec.on_error, connect=connect, status_of=status_of
    )
    assert rec.statuses[-2:] == [f"error:{message}", "closed"]
    assert len(connect.calls) == 1  # refused for good: no retry
    assert asked == ([] if handshake == 404 else ["chat-gone"])
