"""Connected clients per chat: every frame of a chat goes to each of its sockets.

Frames are encoded once; each connection drains its own bounded queue, so a slow client
cannot stall a turn (it is dropped instead).
"""

from __future__ import annotations

import logging
from collections import defaultdict

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from backend.server.tracing import NO_TRACE, Tracer
from shared_contracts.frames import ServerFrame

log = logging.getLogger("harness.ws")

ENCODER = msgspec.json.Encoder()
QUEUE_FRAMES = 4096


class Connection:
    def __init__(self, chat_id: str) -> None:
        self.chat_id = chat_id
        send, receive = anyio.create_memory_object_stream[str](QUEUE_FRAMES)
        self.outbox: MemoryObjectSendStream[str] = send
        self.inbox: MemoryObjectReceiveStream[str] = receive
        self.dropped = False

    def offer(self, text: str) -> None:
        try:
            self.outbox.send_nowait(text)
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.dropped = True
            self.outbox.close()


class ChatHub:
    def __init__(self, tracer: Tracer | None = None) -> None:
        self.trace = tracer or NO_TRACE
        self._connections: dict[str, set[Connection]] = defaultdict(set)

    def connect(self, chat_id: str) -> Connection:
        connection = Connection(chat_id)
        self._connections[chat_id].add(connection)
        return connection

    def disconnect(self, connection: Connection) -> None:
        peers = self._connections.get(connection.chat_id)
        if peers is not None:
            peers.discard(connection)
            if not peers:
                del self._connections[connection.chat_id]
        connection.outbox.close()

    def count(self, chat_id: str | None = None) -> int:
        if chat_id is not None:
            return len(self._connections.get(chat_id, ()))
        return sum(len(c) for c in self._connections.values())

    async def broadcast(self, chat_id: str, frame: ServerFrame) -> None:
        text = ENCODER.encode(frame).decode()
        self.trace.outbound(chat_id, text)  # recorded whether or not anyone is connected
        peers = self._connections.get(chat_id)
        if not peers:
            return
        for connection in list(peers):
            connection.offer(text)
            if connection.dropped:
                log.warning("[chat %s] dropped a client that fell behind", chat_id)
                peers.discard(connection)

    def sink(self, chat_id: str):
        async def send(frame: ServerFrame) -> None:
            await self.broadcast(chat_id, frame)

        return send
