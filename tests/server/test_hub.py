"""The hub's per-socket queue: order, one wake-up per burst, bounded, closed."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from backend.server.hub import QUEUE_FRAMES, ChatHub, Connection
from shared_contracts.frames import Pong


async def test_a_burst_is_sent_in_order_and_drain_returns_once_closed():
    connection = Connection("chat-1")
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.drain, send)
        await anyio.lowlevel.checkpoint()
        for n in range(5):
            connection.offer(f"f{n}")
        await anyio.sleep(0.01)
        assert [m["text"] for m in sent] == ["f0", "f1", "f2", "f3", "f4"]
        connection.offer("last")
        connection.close()
    assert sent[-1] == {"type": "websocket.send", "text": "last"}
    assert not connection.dropped


async def test_a_client_that_falls_behind_is_dropped_and_others_still_get_frames():
    hub = ChatHub()
    slow = hub.connect("chat-1")
    fast = hub.connect("chat-1")
    got: list[str] = []

    async def send(message: dict) -> None:
        got.append(message["text"])

    async with anyio.create_task_group() as tg:
        tg.start_soon(fast.drain, send)
        for n in range(QUEUE_FRAMES + 1):  # nobody drains `slow`; `fast` drains as it goes
            await hub.broadcast("chat-1", Pong())
            if n % 512 == 0:
                await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.01)
        assert slow.dropped and slow.lagged and not fast.dropped
        assert hub.count("chat-1") == 1
        await hub.broadcast("chat-1", Pong())
        await anyio.sleep(0.01)
        hub.disconnect(fast)
    assert len(got) == QUEUE_FRAMES + 2


def test_an_offer_after_close_drops_the_client():
    connection = Connection("chat-1")
    connection.close()
    connection.offer("late")
    assert connection.dropped and not connection.lagged  # gone, not behind
