"""What the learner sees, in headless Chromium through the Reflex UI (issue 24).

- B12: send → the first streamed token drawn, and answer → the verdict drawn, against the
  same frame's arrival at a raw WebSocket client on the API (same chat, same turn). Times
  are wall-clock instants: the page's (`performance.timeOrigin + now()`, corrected by the
  measured clock offset) and ours; the goal is on the difference.
- B13: a full navigation to a chat of 320 messages → its last message drawn and the
  composer usable (the page's own clock from navigation start), against a chat of 10.
- B14: the UI server's CPU (its whole process tree) per frame of a streamed 300-token
  answer at the end of a 320-message chat, against the same answer in a 10-message chat.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

from bench.context import BenchContext
from bench.harness import Check, Result, ainterleave, median, percentile
from bench.ui_data import LONG, SHORT, b14_chat
from bench.ui_stack import UiStack, browser_page, clock_offset_ms, ui_stack
from bench.wsclient import open_ws

MS = 1000.0
TOKEN_PACE_MS = 30  # a model streaming ≈ 33 tokens a second
B14_TOKENS, B14_PACE_MS = 300, 10


class RawWatcher:
    """A raw WebSocket client on the API's chat socket: the wall-clock arrival (ms) of the
    first frame of each kind it is asked to watch for."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: dict[str, float] = {}
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            at = time.time() * MS
            kind = json.loads(raw).get("type", "")
            self.seen.setdefault(kind, at)

    def reset(self) -> None:
        self.seen = {}

    async def wait(self, kind: str, seconds: float = 60.0) -> float:
        deadline = time.monotonic() + seconds
        while kind not in self.seen:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {kind} frame at the raw client")
            await asyncio.sleep(0.005)
        return self.seen[kind]

    async def close(self) -> None:
        self._task.cancel()
        await self.ws.close()


class DeltaTap:
    """What the UI server sends the page: the size (bytes) of each socket.io `event`
    message (Reflex's state deltas), and how often each state is in one."""

    EVENT = '42/_event,["event"'
    """A socket.io event message on Reflex's `/_event` namespace."""

    def __init__(self, page: Any) -> None:
        self.sizes: list[int] = []
        self.states: Counter[str] = Counter()
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: str | bytes) -> None:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        if not text.startswith(self.EVENT):
            return
        self.sizes.append(len(text.encode()))
        delta = json.loads(text[text.index("[") :])[1].get("delta") or {}
        self.states.update(name.rsplit(".", 1)[-1] for name in delta)

    def reset(self) -> None:
        self.sizes = []
        self.states = Counter()

    def taken(self) -> tuple[int, int]:
        """(messages, bytes) since the last reset."""
        return len(self.sizes), sum(self.sizes)


async def _watch(stack: UiStack, chat_id: str) -> RawWatcher:
    ws = await open_ws(f"{stack.ws_url}/api/chats/{chat_id}/ws")
    await ws.recv()  # the snapshot
    return RawWatcher(ws)


async def _open_room(page: Any, stack: UiStack, chat_id: str) -> None:
    await page.goto(f"{stack.ui_url}/chat/{chat_id}")
    await page.wait_for_function(
        "document.getElementById('connection-status')?.textContent === 'Connected'"
    )


async def _mark(page: Any, name: str) -> float:
    await page.wait_for_function(f"'{name}' in window.__lh.marks")
    return float(await page.evaluate(f"window.__lh.marks['{name}']"))


def _new_chat(stack: UiStack) -> str:
    import httpx

    response = httpx.post(f"{stack.api_url}/api/chats", json={"title": "B12"}, timeout=30)
    response.raise_for_status()
    return str(response.json()["id"])


async def _b12_round(page: Any, stack: UiStack, index: int) -> tuple[float, ...]:
    """(token floor, token subject, verdict floor, verdict subject) in ms."""
    chat_id = _new_chat(stack)
    await _open_room(page, stack, chat_id)
    raw = await _watch(stack, chat_id)
    try:
        offset = await clock_offset_ms(page)
        tag = f"r{index}x"
        await page.evaluate(f"window.__lh.reset({{text: '{tag}t0'}})")
        await page.locator("#composer").fill(f"quiz tokens:20@{TOKEN_PACE_MS}:{tag}")
        await page.locator("#composer").press("Enter")
        sent = await _mark(page, "send") - offset
        drawn = await _mark(page, "text") - offset
        arrived = await raw.wait("text_delta")
        await page.locator("#answer-choices [role=radio][value=b]").click()
        await raw.wait("turn_finished")
        raw.reset()
        await page.locator("#submit-answer").click()
        answered = await _mark(page, "answer") - offset
        verdict_drawn = await _mark(page, "verdict") - offset
        verdict_arrived = await raw.wait("verdict")
        await raw.wait("turn_finished")
        return (arrived - sent, drawn - sent, verdict_arrived - answered, verdict_drawn - answered)
    finally:
        await raw.close()


def _added(result: Result, median_ms: float, p99_ms: float) -> Result:
    extra = [s - f for f, s in zip(result.floor, result.subject, strict=False)]
    result.extra["added_ms"] = extra
    result.checks = [
        Check("added ms median", median(extra), median_ms),
        Check("added ms p99", percentile(extra, 99), p99_ms),
    ]
    result.note = (
        f"added by the UI: median {median(extra):.1f} ms, p99 {percentile(extra, 99):.1f} ms"
    )
    return result


def bench_b12(ctx: BenchContext) -> list[Result]:
    stack = ui_stack(ctx)
    rounds = max(ctx.rounds, 1) if ctx.quick else max(ctx.rounds, 15)

    async def measure() -> list[tuple[float, ...]]:
        async with browser_page() as page:
            await _b12_round(page, stack, -1)  # warm the page, the socket and the model path
            return [await _b12_round(page, stack, i) for i in range(rounds)]

    figures = asyncio.run(measure())
    token_floor, token, verdict_floor, verdict = (list(col) for col in zip(*figures, strict=True))
    goal = "added median ≤ +50 ms, p99 ≤ +100 ms"
    first = Result(
        id="B12-token",
        what="send → first streamed token drawn in Chromium",
        unit="ms",
        floor_label="send → the same text_delta at a raw WebSocket client on the API",
        floor=token_floor,
        subject=token,
        goal=goal,
        extra={"pace_ms": TOKEN_PACE_MS},
    )
    graded = Result(
        id="B12-verdict",
        what="answer → verdict drawn in Chromium",
        unit="ms",
        floor_label="answer → the verdict frame at a raw WebSocket client on the API",
        floor=verdict_floor,
        subject=verdict,
        goal=goal,
    )
    return [_added(first, 50.0, 100.0), _added(graded, 50.0, 100.0)]


async def _open_time(page: Any, stack: UiStack, chat_id: str) -> float:
    """ms from navigation start to the chat's last message drawn with the composer usable."""
    await page.goto("about:blank")
    await page.goto(f"{stack.ui_url}/chat/{chat_id}", wait_until="commit")
    return await _mark(page, "open")


def bench_b13(ctx: BenchContext) -> list[Result]:
    stack = ui_stack(ctx)

    async def measure() -> tuple[list[float], list[float]]:
        async with browser_page() as page:
            for chat_id in ("b13-short", "b13-long"):  # the bundle cached, both chats read once
                await _open_time(page, stack, chat_id)
            return await ainterleave(
                ctx.rounds,
                lambda: _open_time(page, stack, "b13-short"),
                lambda: _open_time(page, stack, "b13-long"),
            )

    floors, subjects = asyncio.run(measure())
    result = Result(
        id="B13",
        what=f"open a {LONG}-message chat: last message drawn, composer usable",
        unit="ms",
        floor_label=f"opening a {SHORT}-message chat (full navigation, same page)",
        floor=floors,
        subject=subjects,
        goal="≤ 1.5× floor",
    )
    result.checks = [Check("ratio", result.ratio_median, 1.5)]
    return [result]


async def _stream_cpu(
    page: Any, stack: UiStack, chat_id: str, tokens: int, tap: DeltaTap
) -> tuple[float, int, int]:
    """The UI server's CPU µs per frame of one `tokens`-token answer streamed into chat
    `chat_id` (opened first, then left to settle), from the learner's send to the page
    seeing the turn end, plus the last flush; and the (messages, bytes) it sent the page
    meanwhile."""
    await _open_room(page, stack, chat_id)
    raw = await _watch(stack, chat_id)
    try:
        await asyncio.sleep(0.5)
        before = stack.ui_cpu()
        tap.reset()
        await page.locator("#composer").fill(f"tokens:{tokens}@{B14_PACE_MS}")
        await page.locator("#composer").press("Enter")
        await raw.wait("turn_finished")
        await page.wait_for_function("!document.getElementById('stop')")  # the page saw it
        await asyncio.sleep(0.3)
        cpu = (stack.ui_cpu() - before) / tokens * 1e6
        return (cpu, *tap.taken())
    finally:
        await raw.close()


def bench_b14(ctx: BenchContext) -> list[Result]:
    stack = ui_stack(ctx)
    tokens = 60 if ctx.quick else B14_TOKENS
    sent: dict[str, list[tuple[int, int]]] = {"short": [], "long": []}
    states: Counter[str] = Counter()

    async def measure() -> tuple[list[float], list[float]]:
        async with browser_page() as page:
            tap = DeltaTap(page)
            for kind in ("short", "long"):  # warm both
                await _stream_cpu(page, stack, b14_chat(kind, -1), tokens, tap)
            floors: list[float] = []
            subjects: list[float] = []
            for index in range(ctx.rounds):
                pair = [(floors, "short"), (subjects, "long")]
                for sink, kind in pair if index % 2 == 0 else pair[::-1]:
                    cpu, messages, size = await _stream_cpu(
                        page, stack, b14_chat(kind, index), tokens, tap
                    )
                    sink.append(cpu)
                    sent[kind].append((messages, size))
                    states.update(tap.states)
            return floors, subjects

    floors, subjects = asyncio.run(measure())
    result = Result(
        id="B14",
        what=f"UI server CPU per frame, {tokens}-token answer in a {LONG}-message chat",
        unit="µs",
        floor_label=f"the same answer in a {SHORT}-message chat (a fresh pair of chats a round)",
        floor=floors,
        subject=subjects,
        goal="≤ 1.2× floor",
        extra={"tokens": tokens, "pace_ms": B14_PACE_MS, "sent": sent, "states": dict(states)},
    )
    result.checks = [Check("ratio", result.ratio_median, 1.2)]
    result.note = _sent_note(sent["long"], tokens)
    return [result]


def _sent_note(sent: list[tuple[int, int]], tokens: int) -> str:
    """The deltas the UI server sent the page for one answer (the long chat's rounds)."""
    if not sent:
        return ""
    messages = median([float(m) for m, _ in sent])
    size = median([float(b) for _, b in sent])
    return (
        f"to the page a {tokens}-token answer: {messages:.0f} delta messages, "
        f"{size / 1000:.1f} kB ({size / max(messages, 1):.0f} B a message)"
    )
