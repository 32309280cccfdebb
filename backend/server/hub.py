"""Connected clients per chat: every frame of a chat goes to each of its sockets.

Frames are encoded once; each connection drains its own bounded queue, so a slow client
cannot stall a turn (it is dropped instead).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable

import anyio
import msgspec
from litestar.types import Send

from backend.core.ports import ChatFanOut
from backend.tracing.tracer import NO_TRACE, Tracer
from shared_contracts.frames import (
    GraphUpdated,
    JobFrame,
    ServerFrame,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from shared_contracts.jobs import Job

log = logging.getLogger("harness.ws")

ENCODER = msgspec.json.Encoder()
QUEUE_FRAMES = 4096
FANNED_OUT: frozenset[type[ServerFrame]] = frozenset(
    {JobFrame, GraphUpdated, TurnStarted, TurnFinished}
)
"""The frames other processes' sockets get as they are (a turn's streamed text stays with
the turn's process: theirs get the chat re-read once the turn has finished)."""


class Connection:
    """One socket's outgoing frames: a FIFO of at most `QUEUE_FRAMES` encoded frames that
    `drain` sends in order. An offer to a full or closed queue drops the client."""

    def __init__(self, chat_id: str) -> None:
        self.chat_id = chat_id
        self.dropped = False  # the hub stops offering it frames
        self.lagged = False  # ...because its queue was full, not because it had closed
        self.closed = False
        self._frames: deque[str] = deque()
        self._wake: anyio.Event | None = None

    def offer(self, text: str) -> None:
        """Queue one frame (never blocks); a full or closed queue marks the client dropped."""
        if self.closed or len(self._frames) >= QUEUE_FRAMES:
            self.lagged = not self.closed
            self.dropped = True
            self.close()
            return
        self._frames.append(text)
        if self._wake is not None:  # the writer sleeps: wake it once for this burst
            self._wake.set()
            self._wake = None

    def close(self) -> None:
        """No more frames are accepted; `drain` returns once the queue is empty."""
        self.closed = True
        if self._wake is not None:
            self._wake.set()

    async def drain(self, send: Send) -> None:
        """Send every queued frame in order, as ASGI `websocket.send` text events on `send`,
        until closed. Frames already queued go out back to back (no scheduling point
        between them beyond what `send` itself awaits): one wake-up per burst."""
        frames = self._frames
        while True:
            while frames:
                event = {"type": "websocket.send", "text": frames.popleft()}
                await send(event)  # type: ignore[arg-type]  # ASGI: `bytes` may be absent
            if self.closed:
                return
            self._wake = wake = anyio.Event()
            try:
                await wake.wait()
            finally:
                self._wake = None


class ChatHub:
    def __init__(self, tracer: Tracer | None = None, fanout: ChatFanOut | None = None) -> None:
        self.trace = tracer or NO_TRACE
        self._connections: dict[str, set[Connection]] = {}
        self._fanout = fanout if fanout is not None and fanout.remote else None

    def connect(self, chat_id: str) -> Connection:
        connection = Connection(chat_id)
        self._connections.setdefault(chat_id, set()).add(connection)
        return connection

    def disconnect(self, connection: Connection) -> None:
        peers = self._connections.get(connection.chat_id)
        if peers is not None:
            peers.discard(connection)
            if not peers:
                del self._connections[connection.chat_id]
        connection.close()

    def count(self, chat_id: str | None = None) -> int:
        if chat_id is not None:
            return len(self._connections.get(chat_id, ()))
        return sum(len(c) for c in self._connections.values())

    async def broadcast(self, chat_id: str, frame: ServerFrame) -> None:
        self.publish(chat_id, frame)

    def publish(self, chat_id: str, frame: ServerFrame) -> None:
        """Record one frame and queue it, encoded once, for every socket of the chat."""
        text = ENCODER.encode(frame).decode()
        # Recorded whether or not anyone is connected; a streamed delta joins its run.
        if type(frame) is TextDelta:
            self.trace.outbound_delta(chat_id, frame.message_id, frame.delta)
        else:
            self.trace.outbound(chat_id, text)
        self._deliver(chat_id, text)
        if self._fanout is not None and type(frame) in FANNED_OUT:
            self._fanout.publish(chat_id, text)
            if type(frame) is TurnFinished:
                self._fanout.publish(chat_id, None)  # theirs re-read the finished turn

    def announce_ended(self, jobs: Iterable[Job]) -> None:
        """Jobs a dead process ran, ended here as interrupted (no unit sends their frames):
        to their chats' sockets here and in the other processes, unrecorded."""
        for job in jobs:
            text = ENCODER.encode(JobFrame(job=job)).decode()
            self._deliver(job.chat_id, text)
            if self._fanout is not None:
                self._fanout.publish(job.chat_id, text)

    def relay(self, chat_id: str, text: str) -> None:
        """A frame another process published (and recorded): to this process's sockets."""
        self._deliver(chat_id, text)

    def _deliver(self, chat_id: str, text: str) -> None:
        """Queue an encoded frame for every socket of the chat (dropping any that lag)."""
        peers = self._connections.get(chat_id)
        if not peers:
            return
        if len(peers) == 1:
            for connection in peers:
                connection.offer(text)
            if not connection.dropped:
                return
        for connection in list(peers):
            if not connection.dropped:
                connection.offer(text)
            if connection.dropped:
                if connection.lagged:
                    log.warning("[chat %s] dropped a client that fell behind", chat_id)
                peers.discard(connection)

    def sink(self, chat_id: str) -> TurnSink:
        """The frame sink of a turn in `chat_id` (encodes, records, queues; never blocks)."""
        return TurnSink(self, chat_id)


class TurnSink:
    """A turn's frames into the hub: awaited with any frame, or, for the streamed text of
    one message, a plain call per delta (`text_deltas`)."""

    def __init__(self, hub: ChatHub, chat_id: str) -> None:
        self._hub = hub
        self._chat_id = chat_id

    async def __call__(self, frame: ServerFrame) -> None:
        self._hub.publish(self._chat_id, frame)

    def text_deltas(self, message_id: str) -> Callable[[str], None]:
        """`push(text)`: one `text_delta` frame of `message_id`, exactly as awaiting this
        sink with `TextDelta(message_id=message_id, delta=text)` would send and record it,
        without the frame object or a coroutine. Only the calling unit may push (its
        deltas are recorded as its own run)."""
        chat_id, deliver = self._chat_id, self._hub._deliver
        record = self._hub.trace.text_deltas(chat_id, message_id)
        head = _delta_head(message_id)
        encode = ENCODER.encode

        def push(text: str) -> None:
            record(text)
            deliver(chat_id, head + encode(text).decode() + "}")

        return push


def _delta_head(message_id: str) -> str:
    """A `text_delta` frame's encoding up to its delta's value (`delta` is the frame's
    last field: what follows is the encoded string and the closing brace)."""
    empty = ENCODER.encode(TextDelta(message_id=message_id, delta="")).decode()
    assert empty.endswith('"delta":""}'), empty
    return empty[: -len('""}')]
