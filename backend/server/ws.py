"""The chat WebSocket: raw text in, one typed decoder, exactly one `error` per bad frame.

The first frame is always `snapshot`. Turns run in the app's task group, so a dropped
socket never loses a turn; frames reach every socket of the chat through the hub.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import anyio
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect, WebSocketException
from litestar.params import FromPath

from backend.core.errors import NotFound
from backend.core.ids import is_valid_id
from backend.server.dispatch import offer_error, receive
from backend.server.hub import ENCODER, Connection
from backend.server.services import Services
from shared_contracts.frames import MAX_INBOUND_FRAME_BYTES, Snapshot

log = logging.getLogger("harness.ws")

MESSAGE_TOO_BIG = 1009


class TokenBucket:
    """Per-socket flood control: `rate` frames per second with bursts up to `burst`."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


def _too_large(raw: str | bytes) -> bool:
    """Over 64 KiB of UTF-8 (a str is only encoded when it could be: ≤ 4 bytes a char)."""
    if isinstance(raw, bytes) or len(raw) * 4 <= MAX_INBOUND_FRAME_BYTES:
        return len(raw) > MAX_INBOUND_FRAME_BYTES
    return len(raw.encode()) > MAX_INBOUND_FRAME_BYTES


PASS_THROUGH_SENDS = (
    "WebSocket.send_wrapper.<locals>.wrapped_send",
    "ExceptionHandlerMiddleware.__call__.<locals>.capture_response_started",
)
"""Litestar's wrappers around the server's ASGI `send` on a WebSocket route, outermost
first. For a `websocket.send` event neither does anything but pass it on: the first
refuses to send once the socket's receive side saw a disconnect (the writer is stopped
then), the second only watches for `http.response.start`."""


def server_send(socket: WebSocket) -> Callable[[dict], Awaitable[None]]:
    """The ASGI server's own `send` under `PASS_THROUGH_SENDS`: two coroutine calls a
    frame fewer. When the wrappers are not exactly those (another Litestar version, a
    `before_send` hook, route middleware), `socket.send` as it is."""
    send = socket.send
    for name in PASS_THROUGH_SENDS:
        code = getattr(send, "__code__", None)
        if getattr(send, "__qualname__", None) != name or code is None:
            return socket.send
        cells = dict(zip(code.co_freevars, send.__closure__ or (), strict=True))
        inner = cells.get("send")
        if inner is None:
            return socket.send
        send = inner.cell_contents
    return send


async def _writer(socket: WebSocket, connection: Connection) -> None:
    """Send the connection's frames as they come, each as the ASGI event `send_text`
    builds, straight to the server's `send` (see `server_send`)."""
    try:
        await connection.drain(server_send(socket))
    except OSError:
        pass  # the client went away mid-send (the server's ClientDisconnected): the reader ends
    finally:
        connection.close()


@websocket("/api/chats/{chat_id:str}/ws")
async def chat_socket(socket: WebSocket, chat_id: FromPath[str]) -> None:
    services: Services = socket.app.state.services
    if not is_valid_id(chat_id):
        raise WebSocketException(detail="invalid chat id", code=4400)
    # The learner's chat stays decoded while the session is open: its turns read no file.
    async with services.chats.held(chat_id):
        try:
            await services.chats.record(chat_id)  # in memory from here: `live_view` reads it
        except NotFound:
            raise WebSocketException(detail="chat not found", code=4404) from None
        await socket.accept()
        await _session(socket, services, chat_id)


async def _session(socket: WebSocket, services: Services, chat_id: str) -> None:
    # One step, no await: the snapshot holds every frame sent before it (a running turn's
    # streamed text so far included), the connection every frame after it.
    view = services.chats.live_view(chat_id)
    connection = services.hub.connect(chat_id)
    try:
        if view is None:  # not in memory after all: read it (frames meanwhile may repeat)
            view = await services.chats.view(chat_id)
        await socket.send_text(ENCODER.encode(Snapshot(chat=view)).decode())
        del view  # the session holds its chat (`held`), not this first snapshot of it
        await _serve(socket, services, connection)
    except WebSocketDisconnect:
        pass
    finally:
        services.hub.disconnect(connection)


async def _serve(socket: WebSocket, services: Services, connection: Connection) -> None:
    """Read client frames until the socket closes, while `_writer` sends the hub's frames."""
    bucket = TokenBucket(services.settings.ws_frames_per_second, services.settings.ws_burst)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_writer, socket, connection)
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                break
            raw = event.get("text")
            if raw is None:
                raw = event.get("bytes") or b""
            if _too_large(raw):
                await socket.close(code=MESSAGE_TOO_BIG, reason="frame over 64 KiB")
                break
            if not bucket.allow():
                offer_error(connection, "rate_limited", "too many frames; slow down")
                continue
            await receive(services, connection, raw)
        tg.cancel_scope.cancel()
