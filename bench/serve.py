"""Benchmark servers, one per process: `python -m bench.serve KIND [options]`.

Every WebSocket server runs on the project's own uvicorn config
(`backend.cli.serving.uvicorn_config`: websockets-sansio, 64 KiB inbound limit, no
permessage-deflate), so floors and subjects differ only in the app. Kinds:

- `echo`      bare ASGI WebSocket echo; `push N` sends N token-sized frames, then `done`
- `app`       the real Litestar app (`create_app`) with the instant model, or with
              `--litellm URL` the real `LitellmChatModel` against a fake OpenAI server
- `turnfloor` a minimal Litestar WebSocket turn: the instant model's chunks as frames,
              no persistence, no tools, no record; with `--durable DIR` the same turn also
              writes its chat file twice, atomically and durably (B5-durable)
- `rawsse`    bare ASGI WebSocket; `push N` streams N chunks from the fake OpenAI server
              with raw httpx + a typed msgspec SSE parse and sends one frame per chunk
- `litellmloop` bare ASGI WebSocket; `push N` runs litellm's own stream loop alone
              (`acompletion` + iterating its chunks) against the fake OpenAI server
- `fakeopenai` the loopback fake OpenAI server (tests/agents/fake_openai.py) answering as
              `bench.fake_tutor` scripts it: `tokens:N` asks for N text chunks

Control protocol on stdin/stdout: the process prints `READY <port>`, then answers `cpu`
(process CPU seconds, every thread), `rss` (resident bytes after a collection and
`malloc_trim`), `gc` (tracked objects, then collections of each generation) and stops
on `quit` or end of input.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

import msgspec

from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    TextChunk,
)

TOKEN = "tok "
DEFAULT_TOKENS = 100
FRAME = msgspec.json.encode(
    {"type": "text_delta", "message_id": "msg-0123456789ab", "delta": TOKEN}
).decode()
DONE = '{"type":"done"}'


def tokens_asked(text: str, default: int = DEFAULT_TOKENS) -> int:
    """N from a message `tokens:N`, else `default`."""
    head, _, tail = text.strip().partition(":")
    if head == "tokens" and tail.isdigit():
        return int(tail)
    return default


class InstantModel:
    """A `ChatModel` that answers at once: N `TextChunk`s, then `ModelDone` (N from the last
    user message `tokens:N`, else `tokens`)."""

    name = "instant"

    def __init__(self, tokens: int = DEFAULT_TOKENS) -> None:
        self.tokens = tokens

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        users = [m for m in request.messages if m.role == "user"]
        n = tokens_asked(users[-1].content, self.tokens) if users else self.tokens
        for _ in range(n):
            yield TextChunk(text=TOKEN)
        yield ModelDone(message=ModelMessage(role="assistant", content=TOKEN * n))


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _not_found(send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def bare_ws_app(on_push: Any) -> Any:
    """A bare ASGI app: accepts any WebSocket, echoes text, and hands `push N` to
    `on_push(n, send)`, then sends `done`."""

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "websocket":
            await _not_found(send)
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text") or ""
            if text.startswith("push "):
                await on_push(int(text[5:]), send)
                await send({"type": "websocket.send", "text": DONE})
            else:
                await send({"type": "websocket.send", "text": text})

    return app


async def _push_frames(n: int, send: Any) -> None:
    for _ in range(n):
        await send({"type": "websocket.send", "text": FRAME})


class _Delta(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None


class _ChunkJson(msgspec.Struct):
    choices: list[_Choice] = msgspec.field(default_factory=list)


_CHUNK = msgspec.json.Decoder(_ChunkJson)


async def raw_sse_texts(client: Any, n: int) -> AsyncIterator[str]:
    """The text chunks of one `tokens:n` stream from the fake OpenAI server, read with a
    raw httpx stream and msgspec-parsed SSE lines (B4's floor, and its adapter-alone one)."""
    messages = [{"role": "user", "content": f"tokens:{n}"}]
    body = {"model": "fake", "stream": True, "messages": messages}
    async with client.stream("POST", "/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            for choice in _CHUNK.decode(payload).choices:
                if choice.delta is not None and choice.delta.content:
                    yield choice.delta.content


class _TextDelta(msgspec.Struct, tag_field="type", tag="text_delta"):
    message_id: str
    delta: str


def raw_sse_pusher(base_url: str) -> Any:
    """`push N` for the B4 floor: one raw httpx streaming call, msgspec-parsed SSE lines,
    one encoded frame per text chunk."""
    import httpx

    client = httpx.AsyncClient(base_url=base_url, timeout=60.0)
    encoder = msgspec.json.Encoder()

    async def push(n: int, send: Any) -> None:
        async for text in raw_sse_texts(client, n):
            frame = _TextDelta(message_id="msg-0123456789ab", delta=text)
            await send({"type": "websocket.send", "text": encoder.encode(frame).decode()})

    return push


LOOP_MODEL = "openai/fake"


def litellm_loop_kwargs(base_url: str, n: int) -> dict[str, Any]:
    """The keyword arguments `LitellmChatModel` gives `litellm.acompletion` for a `tokens:n`
    user message (without tools: the fake answers text only)."""
    return {
        "model": LOOP_MODEL,
        "messages": [{"role": "user", "content": f"tokens:{n}"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": 60.0,
        "max_retries": 0,
        "api_base": base_url,
        "api_key": "bench",
    }


async def litellm_loop(base_url: str, n: int, **extra: Any) -> int:
    """litellm's own stream loop: one `acompletion` of a `tokens:n` stream and every chunk
    it yields, iterated to the end and dropped (B4's floor). Returns the chunk count."""
    import litellm

    response = await litellm.acompletion(**{**litellm_loop_kwargs(base_url, n), **extra})
    count = 0
    async for _ in response:
        count += 1
    return count


def litellm_loop_pusher(base_url: str) -> Any:
    """`push N` for the B4 floor: litellm's stream loop alone, no frame per chunk."""
    from backend.agent.litellm_model import LitellmChatModel

    LitellmChatModel(LOOP_MODEL, api_base=base_url)  # litellm imported and frozen as in the app

    async def push(n: int, send: Any) -> None:
        await litellm_loop(base_url, n)

    return push


def turn_floor_app(durable: Path | None = None) -> Any:
    """B5's floor: a Litestar WebSocket that runs the instant model per `user_message` and
    sends turn_started, one text_delta per chunk, turn_finished — nothing persisted.

    With `durable` (B5-durable, information): each socket's turn also replaces a chat file
    under `durable` twice, the user's message and then the answer appended, each the way
    the chat store writes (`replace_atomically`: tmp, fsync, rename, fsync of the
    directory, in a worker thread) — the durability the owner kept, without our code."""
    import itertools

    import anyio.to_thread
    from litestar import Litestar, WebSocket, websocket

    from backend.server.dispatch import CLIENT_FRAMES
    from backend.store.atomic import replace_atomically
    from backend.store.fileops import OsFileOps
    from shared_contracts.frames import TextDelta, TurnFinished, TurnStarted, UserMessage

    model = InstantModel()
    encoder = msgspec.json.Encoder()
    fs, sockets = OsFileOps(), itertools.count()

    async def persist(path: str | None, messages: list[dict[str, str]]) -> None:
        if path is not None:
            data = encoder.encode({"messages": messages})
            await anyio.to_thread.run_sync(replace_atomically, fs, path, data)

    @websocket("/ws")
    async def turns(socket: WebSocket) -> None:
        await socket.accept()
        turn = 0
        path = None if durable is None else str(durable / f"chat-{next(sockets)}.json")
        messages: list[dict[str, str]] = []
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                return
            frame = CLIENT_FRAMES.decode(event.get("text") or event.get("bytes") or b"")
            if not isinstance(frame, UserMessage):
                continue
            turn += 1
            messages.append({"role": "user", "text": frame.text})
            await persist(path, messages)
            await socket.send_text(encoder.encode(TurnStarted(turn_id=turn)).decode())
            request = ModelRequest(
                role="teacher", messages=[ModelMessage(role="user", content=frame.text)]
            )
            answer = []
            async for chunk in model.stream(request):
                if isinstance(chunk, TextChunk):
                    answer.append(chunk.text)
                    delta = TextDelta(message_id="msg-0123456789ab", delta=chunk.text)
                    await socket.send_text(encoder.encode(delta).decode())
            messages.append({"role": "assistant", "text": "".join(answer)})
            await persist(path, messages)
            await socket.send_text(
                encoder.encode(TurnFinished(turn_id=turn, reason="stop")).decode()
            )

    return Litestar(route_handlers=[turns], debug=False)


def real_app(data_dir: Path, litellm_base: str | None) -> Any:
    """The project's app on `data_dir`: instant model, or litellm against `litellm_base`."""
    from backend.server.app import create_app
    from backend.server.settings import Settings

    if litellm_base:
        from backend.agent.litellm_model import LitellmChatModel

        model: Any = LitellmChatModel(
            "openai/fake", api_base=litellm_base, api_key="bench", max_attempts=1
        )
    else:
        model = InstantModel()
    # Inbound flood control would refuse the benchmark's bursts; it is not what is measured.
    settings = Settings(data_dir=data_dir, ws_frames_per_second=1e6, ws_burst=1_000_000)
    return create_app(settings, model=model)


def resident_bytes() -> int:
    """This process's RSS after a full collection and returning freed heap to the OS."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def control(stop: Any) -> None:
    """Answer the parent's commands on stdin until `quit` or end of input."""
    for line in sys.stdin:
        command = line.strip()
        if command == "cpu":
            print(f"{time.process_time():.9f}", flush=True)
        elif command == "rss":
            print(resident_bytes(), flush=True)
        elif command == "gc":
            stats = " ".join(str(g["collections"]) for g in gc.get_stats())
            print(f"{len(gc.get_objects())} {stats}", flush=True)
        elif command == "quit":
            break
    stop()


def serve_uvicorn(app: Any) -> None:
    import uvicorn

    from backend.cli.serving import bind, uvicorn_config

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn_config(app))

    def announce() -> None:
        while not server.started:
            time.sleep(0.01)
        print(f"READY {sock.getsockname()[1]}", flush=True)
        control(lambda: setattr(server, "should_exit", True))

    threading.Thread(target=announce, daemon=True).start()
    server.run(sockets=[sock])


def serve_fake_openai() -> None:
    from bench.fake_tutor import tutor_reply
    from tests.agents.fake_openai import FakeOpenAI

    done = threading.Event()
    with FakeOpenAI(default=tutor_reply) as fake:
        print(f"READY {fake.port}", flush=True)
        control(done.set)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve")
    parser.add_argument(
        "kind", choices=["echo", "app", "turnfloor", "rawsse", "litellmloop", "fakeopenai"]
    )
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one CPU")
    parser.add_argument("--data", type=Path, default=None, help="data dir (app)")
    parser.add_argument(
        "--durable", type=Path, default=None, help="turnfloor: persist each turn's chat here"
    )
    parser.add_argument("--litellm", default=None, help="fake OpenAI base URL (app)")
    parser.add_argument(
        "--upstream", default=None, help="fake OpenAI base URL (rawsse, litellmloop)"
    )
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})  # before any thread exists: they all inherit it
    if args.kind == "fakeopenai":
        serve_fake_openai()
    elif args.kind == "echo":
        serve_uvicorn(bare_ws_app(_push_frames))
    elif args.kind == "rawsse":
        serve_uvicorn(bare_ws_app(raw_sse_pusher(args.upstream)))
    elif args.kind == "litellmloop":
        serve_uvicorn(bare_ws_app(litellm_loop_pusher(args.upstream)))
    elif args.kind == "turnfloor":
        serve_uvicorn(turn_floor_app(args.durable))
    else:
        serve_uvicorn(real_app(args.data, args.litellm))


if __name__ == "__main__":
    main()
