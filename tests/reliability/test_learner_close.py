"""A learner that stops reading mid-turn still closes cleanly (1000): the load generator's
close must not be mistaken for a server that broke the connection."""

from __future__ import annotations

import asyncio
import json
import time

import websockets

from tests.reliability.learner import close_reading, new_chat
from tests.reliability.server_proc import ServerProcess


async def stop_reading_mid_turn(ws_url: str, chat_id: str) -> tuple[int | None, float]:
    ws = await websockets.connect(f"{ws_url}/api/chats/{chat_id}/ws")
    assert json.loads(await ws.recv())["type"] == "snapshot"
    await ws.send(json.dumps({"type": "user_message", "text": "teach me fractions"}))
    assert json.loads(await ws.recv())["type"] == "turn_started"
    await asyncio.sleep(0.5)  # the turn streams on: far more than 16 frames arrive unread
    start = time.monotonic()
    await close_reading(ws)
    return ws.close_code, time.monotonic() - start


def test_a_learner_that_stops_mid_turn_closes_with_1000(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        chat_id = new_chat(server.url, "close")
        code, seconds = asyncio.run(stop_reading_mid_turn(server.ws_url, chat_id))
    finally:
        server.kill()
    assert code == 1000
    assert seconds < 2.0  # not the 10 s close timeout
