"""Item 5 (traffic part), on a real `harness serve`: an oversize frame closes its socket
with 1009, a flood gets typed `rate_limited` errors and its socket survives, and other
sessions keep their turns going and their ping latency."""

from __future__ import annotations

import asyncio
import json
import random
import time

import websockets
from websockets.exceptions import ConnectionClosed

from tests.reliability.figures import ms, percentile, table
from tests.reliability.learner import Learner, LearnerStats, new_chat
from tests.reliability.server_proc import ServerProcess

FLOOD = 400
OVERSIZE = 70 * 1024
PINGS = 50


async def ping_rtts(url: str, count: int, gap: float = 0.06) -> list[float]:
    """Round trips of `count` pings, paced under the per-socket limit (20/s)."""
    async with websockets.connect(url) as ws:
        await ws.recv()  # snapshot
        out = []
        for _ in range(count):
            start = time.perf_counter()
            await ws.send('{"type":"ping"}')
            frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert frame["type"] == "pong", frame
            out.append(time.perf_counter() - start)
            await asyncio.sleep(gap)
        return out


async def flood(url: str) -> dict[str, int]:
    async with websockets.connect(url) as ws:
        await ws.recv()
        for _ in range(FLOOD):
            await ws.send('{"type":"ping"}')
        counts = {"pong": 0, "rate_limited": 0, "other": 0}
        for _ in range(FLOOD):
            frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
            key = frame.get("code") if frame["type"] == "error" else frame["type"]
            counts[key if key in counts else "other"] += 1
        await asyncio.sleep(2.5)  # the bucket refills: the same socket is served again
        await ws.send('{"type":"ping"}')
        counts["pong after a pause"] = int(json.loads(await ws.recv())["type"] == "pong")
        return counts


async def oversize(url: str) -> tuple[int | None, float]:
    async with websockets.connect(url, max_size=None) as ws:
        await ws.recv()
        start = time.perf_counter()
        await ws.send(json.dumps({"type": "user_message", "text": "x" * OVERSIZE}))
        try:
            await asyncio.wait_for(ws.recv(), 5)
        except ConnectionClosed as closed:
            return (closed.rcvd.code if closed.rcvd else None), time.perf_counter() - start
        return None, time.perf_counter() - start


async def scenario(server: ServerProcess) -> dict:
    ws = server.ws_url
    chats = [new_chat(server.url) for _ in range(4)]
    url = [f"{ws}/api/chats/{c}/ws" for c in chats]
    learner_stats = LearnerStats()
    # a learner paced like a person (≤ ~15 frames/s): with the instant offline tutor an
    # unpaced bot answers faster than the per-socket limit and is rightly throttled
    learner = Learner(ws, chats[0], random.Random(5), learner_stats, think=(0.06, 0.12))
    learner_task = asyncio.create_task(learner.run(until=time.monotonic() + 8))
    baseline = await ping_rtts(url[1], PINGS)
    under, flooded, (code, close_s) = await asyncio.gather(
        ping_rtts(url[1], PINGS), flood(url[2]), oversize(url[3])
    )
    after = await ping_rtts(url[1], 10)
    await learner_task
    return {
        "baseline": baseline,
        "under": under,
        "after": after,
        "flood": flooded,
        "close": (code, close_s),
        "learner": learner_stats,
    }


def test_oversize_and_flood_leave_other_sessions_alone(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        r = asyncio.run(scenario(server))
        alive = server.alive()
    finally:
        server.kill()
    code, close_s = r["close"]
    learner: LearnerStats = r["learner"]
    flood_counts = r["flood"]
    table(
        "oversize frames and floods (real server)",
        [
            (f"oversize frame ({OVERSIZE // 1024} KiB) close code", code),
            ("  closed after", ms(close_s)),
            (f"flood of {FLOOD} pings: pong", flood_counts["pong"]),
            ("  rate_limited errors", flood_counts["rate_limited"]),
            ("  other frames", flood_counts["other"]),
            ("  flooder served again after 2.5 s", bool(flood_counts["pong after a pause"])),
            (
                "other session ping p50 / p99 (baseline)",
                f"{ms(percentile(r['baseline'], 50))} / {ms(percentile(r['baseline'], 99))}",
            ),
            (
                "other session ping p50 / p99 (during flood+oversize)",
                f"{ms(percentile(r['under'], 50))} / {ms(percentile(r['under'], 99))}",
            ),
            ("other session's learner: turns finished", len(learner.acked)),
            ("other session's learner: close codes", learner.close_codes),
            ("server alive", alive),
        ],
    )
    assert code == 1009 and close_s < 1.0
    assert flood_counts["rate_limited"] >= FLOOD // 2 and flood_counts["other"] == 0
    assert flood_counts["pong"] + flood_counts["rate_limited"] == FLOOD
    assert flood_counts["pong after a pause"] == 1
    assert len(r["under"]) == PINGS and len(r["after"]) == 10
    assert percentile(r["under"], 99) < 0.5  # unaffected: no stall of another session
    assert len(learner.acked) >= 5 and learner.close_codes == [1000]
    assert not [e for e in learner.errors if e["code"] != "busy"]
    assert alive
