"""Record a live session in which the learner aborts a streaming turn mid-stream, then
goes on with another turn (the recipe the abort replay tests and loops use)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import msgspec

from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from shared_contracts.model_io import ModelDone, ModelEvent, ModelMessage, ModelRequest, TextChunk
from tests.golden.record import recorded_services, settle

SLOW = "tell me a long story"


class Streamer:
    """Streams many small chunks, slowly when the learner asked for a long story (so an
    abort lands mid-stream), at once otherwise. `started` is set after its third chunk."""

    name = "streamer"

    def __init__(self, chunks: int = 200, pause_s: float = 0.001) -> None:
        self.chunks = chunks
        self.pause_s = pause_s
        self.started = anyio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        slow = SLOW in request.messages[-1].content
        count = self.chunks if slow else 5
        texts = [f"w{i} " for i in range(count)]
        for i, text in enumerate(texts):
            yield TextChunk(text=text)
            if slow:
                if i == 2:
                    self.started.set()
                await anyio.sleep(self.pause_s)
        yield ModelDone(message=ModelMessage(role="assistant", content="".join(texts)))


def frame(kind: str, **fields: object) -> str:
    return msgspec.json.encode({"type": kind, **fields}).decode()


async def record_abort_session(data_dir: Path, delay_s: float = 0.005) -> str:
    """A chat: a slow turn aborted `delay_s` after its third chunk, then a fast turn."""
    settings = Settings(data_dir=data_dir)
    stores = build_stores(data_dir)
    tracer = recording_tracer(stores, settings)
    model = Streamer()
    async with recorded_services(settings, model, stores, tracer) as services:
        record = await services.chats.create_record()
        connection = Connection(record.id)
        await receive(services, connection, frame("user_message", text=SLOW))
        await model.started.wait()
        await anyio.sleep(delay_s)
        await receive(services, connection, frame("abort"))
        await settle(services, record.id)
        await receive(services, connection, frame("user_message", text="go on, briefly"))
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id
