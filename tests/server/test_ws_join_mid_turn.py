"""A socket that opens while the teacher is streaming (a second tab, a reconnect) sees the
message whole: its snapshot holds the text streamed so far, its deltas the rest, none twice."""

from __future__ import annotations

import threading

import anyio.to_thread

from shared_contracts.chat import TextPart
from shared_contracts.frames import Snapshot, TextDelta, TurnFinished
from shared_contracts.model_io import ModelDone, ModelMessage, ModelRequest, TextChunk
from tests.server.test_ws import new_chat, receive, until

CHUNKS = [f"word{i} " for i in range(8)]


class PausingModel:
    """Streams half its chunks, waits until released, then streams the rest."""

    def __init__(self) -> None:
        self.release = threading.Event()

    async def stream(self, request: ModelRequest):
        for chunk in CHUNKS[:4]:
            yield TextChunk(text=chunk)
        await anyio.to_thread.run_sync(self.release.wait)  # set from the test's thread
        for chunk in CHUNKS[4:]:
            yield TextChunk(text=chunk)
        yield ModelDone(message=ModelMessage(role="assistant", content="".join(CHUNKS)))


def _texts(snapshot: Snapshot) -> list[str]:
    return [
        part.text
        for message in snapshot.chat.messages
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, TextPart)
    ]


def test_a_socket_opened_mid_stream_gets_the_text_so_far_then_the_rest(client_factory):
    model = PausingModel()
    client = client_factory(model)
    chat = new_chat(client)
    try:
        snapshot, frames = _join_mid_stream(client, chat, model)
    finally:
        model.release.set()  # never leave the model's thread waiting
    later = "".join(f.delta for f in frames if isinstance(f, TextDelta))
    assert _texts(snapshot) == ["".join(CHUNKS[:4])]
    assert "".join(_texts(snapshot)) + later == "".join(CHUNKS)


def _join_mid_stream(client, chat: str, model: PausingModel) -> tuple[Snapshot, list]:
    with client.websocket_connect(f"/api/chats/{chat}/ws") as first:
        receive(first)
        first.send_text('{"type": "user_message", "text": "teach me"}')
        deltas = [f for f in until(first, TextDelta) if isinstance(f, TextDelta)]
        while len(deltas) < 4:
            frame = receive(first)
            if isinstance(frame, TextDelta):
                deltas.append(frame)
        with client.websocket_connect(f"/api/chats/{chat}/ws") as second:
            snapshot = receive(second)
            assert isinstance(snapshot, Snapshot) and snapshot.chat.turn_running
            model.release.set()
            frames = until(second, TurnFinished)
        until(first, TurnFinished)
    return snapshot, frames
