"""The benchmark's client side: WebSocket connections, turns, pushes, chats over HTTP.

The client is the Python `websockets` library without compression (the server negotiates
none); its own CPU is not measured, only the server process's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import anyio
import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench.procs import ServerProc
from bench.serve import DONE

Action = Callable[[int], Awaitable[None]]


def run_async(fn: Callable[[], Awaitable[object]]) -> object:
    """Run a coroutine function on uvloop when available (a cheaper client loop)."""
    try:
        return anyio.run(fn, backend_options={"use_uvloop": True})
    except ImportError:  # pragma: no cover - uvloop is installed with uvicorn[standard]
        return anyio.run(fn)


async def open_ws(url: str) -> ClientConnection:
    """A client connection with no compression, no keep-alive pings and no size limit."""
    return await connect(url, compression=None, max_size=None, proxy=None, ping_interval=None)


async def close_all(sockets: list[ClientConnection]) -> None:
    for ws in sockets:
        with contextlib.suppress(Exception):
            await ws.close()


async def create_chats(server: ServerProc, count: int) -> list[str]:
    """`count` new chats through `POST /api/chats`."""
    async with httpx.AsyncClient(base_url=server.http, timeout=30.0) as http:
        ids = []
        for index in range(count):
            response = await http.post("/api/chats", json={"title": f"bench {index}"})
            response.raise_for_status()
            ids.append(response.json()["id"])
        return ids


async def open_chat(server: ServerProc, chat_id: str) -> ClientConnection:
    """A socket on the chat route, past its first `snapshot` frame."""
    ws = await open_ws(f"{server.ws}/api/chats/{chat_id}/ws")
    first = await ws.recv()
    if '"type":"snapshot"' not in first:
        raise RuntimeError(f"expected a snapshot, got {first[:200]!r}")
    return ws


def user_message(tokens: int) -> str:
    return msgspec.json.encode({"type": "user_message", "text": f"tokens:{tokens}"}).decode()


BUSY_RETRIES: list[int] = [0]
"""How often a turn was refused as busy right after the previous `turn_finished` (a race
in the server: the frame can reach the client before the chat is released)."""


async def turn(ws: ClientConnection, tokens: int) -> None:
    """One turn asking for `tokens` chunks; returns when `turn_finished` arrives. A `busy`
    refusal is retried (and counted in `BUSY_RETRIES`)."""
    await ws.send(user_message(tokens))
    while True:
        text = await ws.recv()
        if '"type":"turn_finished"' in text:
            if '"reason":"stop"' not in text:
                raise RuntimeError(f"turn did not finish cleanly: {text[:200]}")
            return
        if '"code":"busy"' in text:
            BUSY_RETRIES[0] += 1
            await anyio.sleep(0.001)
            await ws.send(user_message(tokens))
            continue
        if '"type":"error"' in text:
            raise RuntimeError(f"server error frame: {text[:300]}")


async def push(ws: ClientConnection, frames: int) -> None:
    """Ask a bare server for `frames` frames; returns when its `done` arrives."""
    await ws.send(f"push {frames}")
    while await ws.recv() != DONE:
        pass


async def cpu_slope(server: ServerProc, action: Action, small: int, large: int) -> float:
    """Server CPU seconds per unit: (CPU(large) − CPU(small)) / (large − small), which
    cancels the fixed cost of one action (a turn's persistence, a request)."""
    c0 = server.cpu()
    await action(small)
    c1 = server.cpu()
    await action(large)
    c2 = server.cpu()
    return ((c2 - c1) - (c1 - c0)) / (large - small)
