"""A WebSocket's outgoing frames, sent straight to the ASGI server's `send`."""

from __future__ import annotations

from typing import Any

from litestar import WebSocket
from litestar.types import Send

from backend.server.hub import Connection

PASS_THROUGH_SENDS = (
    "WebSocket.send_wrapper.<locals>.wrapped_send",
    "ExceptionHandlerMiddleware.__call__.<locals>.capture_response_started",
)
"""Litestar's wrappers around the server's ASGI `send` on a WebSocket route, outermost
first. For a `websocket.send` event neither does anything but pass it on: the first
refuses to send once the socket's receive side saw a disconnect (the writer is stopped
then), the second only watches for `http.response.start`."""


def server_send(socket: WebSocket[Any, Any, Any]) -> Send:
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


async def writer(socket: WebSocket[Any, Any, Any], connection: Connection) -> None:
    """Send the connection's frames as they come, each as the ASGI event `send_text`
    builds, straight to the server's `send` (see `server_send`)."""
    try:
        await connection.drain(server_send(socket))
    except OSError:
        pass  # the client went away mid-send (the server's ClientDisconnected): the reader ends
    finally:
        connection.close()
