"""Record live sessions in which the learner's abort lands anywhere in a turn: in a model
stream, in a slow store write, between a tool's execution and the next model call (the
recipe the abort-landing tests and loops use)."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio

from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.store.fileops import OsFileOps
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
)
from tests.golden.record import recorded_services, settle
from tests.replay.abort_session import frame

LONG = "plan me a lesson"
PLAN_ARGS = '{"goal": "Lists", "nodes": [{"id": "n1", "title": "Indexing"}]}'


class SlowFileOps(OsFileOps):
    """The OS, with every fsync taking `pause_s` longer (a slow disk): a chat write then
    spends most of its time in a worker thread, where an abort can land."""

    def __init__(self, pause_s: float = 0.002) -> None:
        self.pause_s = pause_s
        self.slow = False
        """Off while a session is set up; on for the turn an abort may land in."""

    def fsync(self, fd: int) -> None:
        if self.slow:
            time.sleep(self.pause_s)
        super().fsync(fd)

    def fsync_dir(self, path: str) -> None:
        if self.slow:
            time.sleep(self.pause_s)
        super().fsync_dir(path)


class Planner:
    """A teacher whose long turn streams a little, calls `plan_init` (a chat write), then
    streams a little more (pausing `pause_s` after each chunk of the long turn): an abort
    sent at any moment finds it in a stream, a store write or between the two. Any other
    turn is short and does not pause."""

    name = "planner"

    def __init__(self, pause_s: float = 0.001, chunks: int = 4) -> None:
        self.pause_s = pause_s
        self.chunks = chunks
        self.streaming = anyio.Event()
        """Set once the long turn's first call has streamed two chunks."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        asked = next(m for m in reversed(request.messages) if m.role == "user")
        long_turn = LONG in asked.content
        first = long_turn and last is asked
        texts = [f"s{i} " for i in range(self.chunks if long_turn else 3)]
        for i, text in enumerate(texts):
            yield TextChunk(text=text)
            if long_turn:
                if first and i == 1:
                    self.streaming.set()
                await anyio.sleep(self.pause_s)
        content = "".join(texts)
        if first:
            call = ModelToolCall(id="call-plan", name="plan_init", arguments=PLAN_ARGS)
            yield ToolCallChunk(index=0, id=call.id, name=call.name)
            yield ToolCallChunk(index=0, arguments=call.arguments)
            message = ModelMessage(role="assistant", content=content, tool_calls=[call])
            yield ModelDone(message=message, finish_reason="tool_calls")
            return
        yield ModelDone(message=ModelMessage(role="assistant", content=content))


class GatedFileOps(OsFileOps):
    """The OS, except that once `arm`ed, the first write whose bytes contain the marker
    waits in its worker thread (the store write in flight) until `release` is set;
    `entered` is set when it starts waiting."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self._marker: bytes | None = None
        self._lock = threading.Lock()

    def arm(self, marker: bytes) -> None:
        self._marker = marker

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        with self._lock:
            hit = self._marker is not None and self._marker in bytes(data)
            if hit:
                self._marker = None
        if hit:
            self.entered.set()
            self.release.wait(timeout=10)
        return super().write(fd, data)


async def release_when_blocked(fs: GatedFileOps) -> None:
    """Once every task waits (the turn on its gated write, the abort frame on the chat's
    state, which that write holds), let the write finish."""
    await anyio.wait_all_tasks_blocked()
    fs.release.set()


AbortAt = Callable[[], Awaitable[None]]
"""Returns when the learner sends the abort (after the long turn began)."""


def after(delay_s: float) -> AbortAt:
    """Abort `delay_s` after the long turn's message was sent."""
    return lambda: anyio.sleep(delay_s)


async def record_abort_anywhere(
    data_dir: Path,
    abort_at: AbortAt,
    *,
    fs: OsFileOps | None = None,
    meanwhile: AbortAt | None = None,
) -> str:
    """A chat: a short turn, then a long one (text, `plan_init`, text) the learner aborts
    when `abort_at` returns, then a short turn again. `meanwhile` runs beside the abort
    frame's dispatch (to release a write the abort waits for). `fs` is the disk (a
    `SlowFileOps` is slow only for the long turn)."""
    fs = fs or SlowFileOps()
    settings = Settings(data_dir=data_dir)
    stores = build_stores(data_dir, fs=fs)
    tracer = recording_tracer(stores, settings)
    async with recorded_services(settings, Planner(), stores, tracer) as services:
        record = await services.chats.create_record()
        connection = Connection(record.id)
        await receive(services, connection, frame("user_message", text="hello"))
        await settle(services, record.id)
        _slow(fs, True)
        await receive(services, connection, frame("user_message", text=LONG))
        await abort_at()
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive, services, connection, frame("abort"))
            if meanwhile is not None:
                await meanwhile()
        await settle(services, record.id)
        _slow(fs, False)
        await receive(services, connection, frame("user_message", text="go on, briefly"))
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


def _slow(fs: OsFileOps, on: bool) -> None:
    if isinstance(fs, SlowFileOps):
        fs.slow = on


async def record_shutdown_mid_turn(
    data_dir: Path,
    stop_at: AbortAt,
    *,
    model: Planner,
    fs: OsFileOps | None = None,
    meanwhile: AbortAt | None = None,
    idle_abort: bool = False,
) -> str:
    """A chat: a short turn, then the long one, during which (when `stop_at` returns) the
    server shuts down — its services are cancelled, as at a SIGTERM — while `meanwhile`
    runs beside it. With `idle_abort`, the learner sends an abort between the two turns
    (when nothing runs: it does nothing)."""
    settings = Settings(data_dir=data_dir)
    stores = build_stores(data_dir, fs=fs)
    tracer = recording_tracer(stores, settings)
    async with anyio.create_task_group() as beside:
        with anyio.CancelScope() as server:
            async with recorded_services(settings, model, stores, tracer) as services:
                record = await services.chats.create_record()
                connection = Connection(record.id)
                await receive(services, connection, frame("user_message", text="hello"))
                await settle(services, record.id)
                if idle_abort:
                    await receive(services, connection, frame("abort"))
                await receive(services, connection, frame("user_message", text=LONG))
                await stop_at()
                if meanwhile is not None:
                    beside.start_soon(meanwhile)
                server.cancel()
                await anyio.sleep_forever()
    return record.id
