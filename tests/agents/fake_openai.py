"""A scripted, OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

`FakeOpenAI` serves `POST /v1/chat/completions` on 127.0.0.1 (port 0) from a thread. Each
request takes the next scripted `Reply` (or, when the script is empty, asks `default`);
every request body is recorded in `requests`. Replies:

- `Stream(chunks)`      an SSE stream of `chat.completion.chunk` objects, then `[DONE]`
- `Fail(status, ...)`   an HTTP error with a JSON body (and e.g. a `Retry-After` header)
- `Reset(chunks)`       streams `chunks`, then drops the connection mid-body
- `Hang(seconds)`       sends nothing for `seconds` (for client timeouts), then closes

`text_chunks`, `tool_call_chunks` and `finish_chunk` build chunk dicts; `stream_text` and
`stream_tool_calls` build whole replies.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Chunk = dict[str, Any]


@dataclass(frozen=True)
class Stream:
    """A successful SSE stream; `delay` seconds between chunks."""

    chunks: Sequence[Chunk]
    delay: float = 0.0


@dataclass(frozen=True)
class Fail:
    """An HTTP error response."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Reset:
    """Streams `chunks`, then closes the socket without ending the chunked body."""

    chunks: Sequence[Chunk]


@dataclass(frozen=True)
class Hang:
    """Accepts the request, then sends nothing for `seconds`."""

    seconds: float


Reply = Stream | Fail | Reset | Hang


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def text_chunks(*parts: str) -> list[Chunk]:
    """One chunk per text part (the first also carries the assistant role)."""
    return [
        _chunk({"role": "assistant", "content": p} if i == 0 else {"content": p})
        for i, p in enumerate(parts)
    ]


def tool_call_chunks(index: int, call_id: str, name: str, *arg_parts: str) -> list[Chunk]:
    """A tool call streamed as a provider does: id+name first, then argument fragments."""
    first = {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    rest = [{"index": index, "function": {"arguments": p}} for p in arg_parts]
    return [_chunk({"tool_calls": [d]}) for d in [first, *rest]]


def finish_chunk(reason: str, prompt_tokens: int = 11, completion_tokens: int = 7) -> list[Chunk]:
    """The closing chunk with `finish_reason`, then a usage-only chunk (include_usage)."""
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    tail = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "fake",
        "choices": [],
        "usage": usage,
    }
    return [_chunk({}, finish_reason=reason), tail]


def stream_text(text: str, word_chunks: bool = True) -> Stream:
    """A whole text answer, split after spaces."""
    parts = [w + " " for w in text.split(" ")] if word_chunks else [text]
    parts[-1] = parts[-1].rstrip(" ")
    return Stream([*text_chunks(*parts), *finish_chunk("stop")])


def stream_tool_calls(calls: Iterable[tuple[str, str, str]], text: str = "") -> Stream:
    """Optional text, then tool calls (id, name, raw JSON args), each args split in 2."""
    chunks: list[Chunk] = text_chunks(text) if text else []
    for index, (call_id, name, args) in enumerate(calls):
        cut = len(args) // 2
        chunks += tool_call_chunks(index, call_id, name, args[:cut], args[cut:])
    return Stream([*chunks, *finish_chunk("tool_calls")])


class FakeOpenAI:
    """The server; use as a context manager (`with FakeOpenAI() as fake: fake.base_url`)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        default: Callable[[dict[str, Any]], Reply] | None = None,
    ) -> None:
        self.replies: list[Reply] = list(replies)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self.replies.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.replies:
                return self.replies.pop(0)
        if self.default is not None:
            return self.default(body)
        return Fail(500, "fake server: script exhausted")

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            reply = fake.next_reply(body)
            if isinstance(reply, Fail):
                self._fail(reply)
            elif isinstance(reply, Hang):
                time.sleep(reply.seconds)
                self.close_connection = True
            else:
                self._stream(reply)

        def _fail(self, reply: Fail) -> None:
            payload = json.dumps(
                {"error": {"message": reply.message, "type": "fake", "code": reply.status}}
            ).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, reply: Stream | Reset) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            delay = reply.delay if isinstance(reply, Stream) else 0.0
            for chunk in reply.chunks:
                self._send_event(json.dumps(chunk))
                if delay:
                    time.sleep(delay)
            if isinstance(reply, Reset):
                # Abort without the terminating zero-length chunk: the client sees a broken body.
                self.wfile.flush()
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self._send_event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _send_event(self, data: str) -> None:
            raw = f"data: {data}\n\n".encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()

    return Handler
