"""A raw ASGI WebSocket handshake with any client address and headers, to test the
guards as a remote (non-loopback) browser or program would meet them."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio


@dataclass
class Handshake:
    """What the app sent back: `accepted`, the close `code`, and any text frames."""

    messages: list[dict] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return any(m["type"] == "websocket.accept" for m in self.messages)

    @property
    def code(self) -> int | None:
        closes = [m for m in self.messages if m["type"] == "websocket.close"]
        return closes[0].get("code", 1000) if closes else None

    @property
    def frames(self) -> list[str]:
        return [m["text"] for m in self.messages if m["type"] == "websocket.send" and "text" in m]


async def handshake(
    app, path: str, *, client: tuple[str, int], headers: dict[str, str], query: str = ""
) -> Handshake:
    """Connect, take the first frame if accepted, then disconnect."""
    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "scheme": "ws",
        "http_version": "1.1",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": client,
        "server": ("127.0.0.1", 8100),
        "subprotocols": [],
        "state": {},
        "extensions": {},
    }
    result = Handshake()
    connected = False
    got_frame = anyio.Event()

    async def receive() -> dict:
        nonlocal connected
        if not connected:
            connected = True
            return {"type": "websocket.connect"}
        with anyio.move_on_after(2):
            await got_frame.wait()
        return {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict) -> None:
        result.messages.append(message)
        if message["type"] in ("websocket.send", "websocket.close"):
            got_frame.set()

    with anyio.fail_after(10):
        await app(scope, receive, send)
    return result
