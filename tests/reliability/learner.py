"""A scripted learner over a real WebSocket: answers each question, else asks for more.

It records every turn whose `turn_finished` it saw (an acknowledged turn) with the text
and tool calls streamed for it, so a crash test can check the turn is on disk.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field

import httpx
import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake

OPENERS = ("teach me fractions", "teach me photosynthesis", "teach me python lists")


@dataclass
class AckedTurn:
    """A turn the client saw finish, with what it was shown during it."""

    chat_id: str
    turn_id: int
    reason: str
    message_ids: set[str] = field(default_factory=set)
    text: str = ""
    tool_call_ids: set[str] = field(default_factory=set)


@dataclass
class LearnerStats:
    acked: list[AckedTurn] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    close_codes: list[int | None] = field(default_factory=list)


def new_chat(url: str, title: str = "reliability", headers: dict | None = None) -> str:
    response = httpx.post(f"{url}/api/chats", json={"title": title}, headers=headers, timeout=10)
    response.raise_for_status()
    return response.json()["id"]


async def new_chat_async(client: httpx.AsyncClient, url: str, title: str) -> str:
    """`new_chat` for a client already running in an event loop (it must not block it)."""
    response = await client.post(f"{url}/api/chats", json={"title": title}, timeout=10)
    response.raise_for_status()
    return response.json()["id"]


def answer_for(question: dict, rng: random.Random) -> str | float:
    """A plausible (often wrong) answer of the right shape for a public question."""
    kind = question["kind"]
    if kind == "multiple_choice":
        return rng.choice(question["options"])["id"]
    if kind == "numeric":
        return float(rng.randint(0, 20))
    return rng.choice(["denominator", "chlorophyll", "append", "I am not sure", "fine"])


class Learner:
    """One chat's learner; `run` drives turns until `turns` are acknowledged or `until`."""

    def __init__(
        self,
        ws_url: str,
        chat_id: str,
        rng: random.Random,
        stats: LearnerStats | None = None,
        keep_frames: bool = False,
        think: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        self.url = f"{ws_url}/api/chats/{chat_id}/ws"
        self.chat_id = chat_id
        self.rng = rng
        self.stats = stats or LearnerStats()
        self.keep_frames = keep_frames
        self.think = think  # seconds a learner pauses before each action (min, max)
        self.question: dict | None = None  # the open question (tool_call_id, question)
        self.current: AckedTurn | None = None
        self.sent_at: float | None = None

    async def run(self, turns: int | None = None, until: float | None = None) -> None:
        """Raises `ConnectionClosed` if the server goes away (a crash test expects that)."""
        ws = await websockets.connect(self.url, max_size=8 * 1024 * 1024)
        try:
            await self._session(ws, turns, until)
        finally:
            await close_reading(ws)
            self.stats.close_codes.append(ws.close_code)  # 1000 unless the server broke it

    async def _session(self, ws, turns: int | None, until: float | None) -> None:
        snapshot = json.loads(await ws.recv())
        assert snapshot["type"] == "snapshot", snapshot
        chat = snapshot["chat"]
        pending = chat.get("pending_question")
        self.question = (
            {"tool_call_id": pending["tool_call_id"], "question": pending["question"]}
            if pending
            else None
        )
        done = 0
        if not chat.get("turn_running"):
            await self._act(ws)
        while turns is None or done < turns:
            try:
                frame = await asyncio.wait_for(ws.recv(), _remaining(until))
            except TimeoutError:
                return  # `until` reached
            if self.keep_frames:
                self.stats.frames.append(frame)
            if await self._on_frame(ws, json.loads(frame)):
                done += 1

    async def _act(self, ws) -> None:
        if self.think[1] > 0:
            await asyncio.sleep(self.rng.uniform(*self.think))
        if self.question is not None:
            q = self.question
            frame = {
                "type": "answer",
                "tool_call_id": q["tool_call_id"],
                "answer": answer_for(q["question"], self.rng),
            }
        else:
            frame = {"type": "user_message", "text": self.rng.choice(OPENERS)}
        self.sent_at = time.monotonic()
        await ws.send(json.dumps(frame))

    async def _on_frame(self, ws, f: dict) -> bool:
        """Track one frame; True when it acknowledged a turn."""
        kind = f["type"]
        if kind == "turn_started":
            self.current = AckedTurn(self.chat_id, f["turn_id"], "")
            self.question = None
        elif kind == "text_delta" and self.current is not None:
            self.current.message_ids.add(f["message_id"])
            self.current.text += f["delta"]
        elif kind == "tool_call" and self.current is not None:
            self.current.message_ids.add(f["message_id"])
            self.current.tool_call_ids.add(f["part"]["tool_call_id"])
        elif kind == "question":
            self.question = {"tool_call_id": f["tool_call_id"], "question": f["question"]}
        elif kind == "error":
            self.stats.errors.append(f)
            if f["code"] in ("no_pending_question", "bad_frame"):
                self.question = None
                await self._act(ws)
        elif kind == "turn_finished":
            turn = self.current or AckedTurn(self.chat_id, f["turn_id"], "")
            turn.reason = f["reason"]
            self.stats.acked.append(turn)
            if self.sent_at is not None:
                self.stats.latencies.append(time.monotonic() - self.sent_at)
                self.sent_at = None
            self.current = None
            await self._act(ws)
            return True
        return False


async def close_reading(ws) -> None:
    """Close, reading on meanwhile. A learner that stops mid-turn has frames still coming;
    the client stops reading the socket once 16 are unread, so the server's close frame,
    queued behind them, would never be seen and the close would end in a 10 s timeout
    and 1006 (two of the soak's 50 sessions did)."""
    closing = asyncio.ensure_future(ws.close())
    try:
        async for _ in ws:
            pass
    except ConnectionClosed:
        pass
    await closing


def _remaining(until: float | None) -> float | None:
    return None if until is None else max(0.0, until - time.monotonic())


async def drive(ws_url: str, chat_id: str, rng: random.Random, stats: LearnerStats, **kw) -> str:
    """Run a learner; returns "closed" when the server went away, else "done"."""
    try:
        await Learner(ws_url, chat_id, rng, stats).run(**kw)
    except (ConnectionClosed, InvalidHandshake, OSError):  # killed mid-turn or mid-handshake
        return "closed"
    return "done"
