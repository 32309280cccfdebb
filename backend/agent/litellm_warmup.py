"""litellm's first-call work, done when a `LitellmChatModel` is built (at start-up).

A process's first streamed call through litellm imports its streaming, logging and cost
modules, loads the default tokenizer, builds a TLS context and the OpenAI SDK's chunk
validators: ~450 ms of CPU in a learner's first turn, against ~30 ms in a later one (bench
B15). `warm_up` does all of it before the server answers, with nothing on the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any


def warm_up(litellm: ModuleType, model: str) -> None:
    """What litellm does once, on a process's first call, done now (at start-up, off any
    event loop) so the learner's first turn does not wait for it (B15: 450 ms of server
    CPU in a first turn, 30 ms in a later one): the model's parameter and cost look-ups,
    its default tokenizer's load (tiktoken's cl100k from litellm's own files, ~0.1 s), its
    TLS context, and one streamed call answered in process (`_dry_stream`) that imports
    and builds what a stream needs. Nothing reaches the network. A step that fails is only
    skipped: the first turn then does it, as before. Once per model string a process."""
    if model in _WARMED:
        return
    _WARMED.add(model)
    steps: list[Callable[[], object]] = [
        lambda: litellm.get_supported_openai_params(model=model),
        lambda: litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1),
        lambda: litellm.encoding,
        _tls_context,
    ]

    for step in steps:
        with contextlib.suppress(Exception):
            step()
    # Its own thread and loop: the constructor may run inside a server's event loop.
    worker = threading.Thread(target=lambda: _quietly(asyncio.run, _dry_stream(litellm, model)))
    worker.start()
    worker.join()


_DRY_SSE = b"".join(
    b"data: " + line + b"\n\n"
    for line in (
        b'{"id":"w","object":"chat.completion.chunk","created":0,"model":"w",'
        b'"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}',
        b'{"id":"w","object":"chat.completion.chunk","created":0,"model":"w",'
        b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        b'{"id":"w","object":"chat.completion.chunk","created":0,"model":"w","choices":[],'
        b'"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
        b"[DONE]",
    )
)
"""A two-chunk OpenAI stream with its usage chunk, answered in process by `_dry_stream`."""


async def _dry_stream(litellm: ModuleType, model: str) -> None:
    """One streamed call through litellm's real path, answered in process: for an
    OpenAI-compatible model, by an OpenAI client on an httpx mock transport (the SDK's
    request, SSE and chunk parsing, whose pydantic models build their validators on first
    use, ~30 ms); for another provider, litellm's `mock_response` (its own streaming,
    logging and cost modules). Nothing reaches the network."""
    messages = [{"role": "user", "content": "warm-up"}]
    options: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
    try:
        provider = litellm.get_llm_provider(model)[1]
    except Exception:
        provider = ""
    if provider != "openai":
        # A model string of an OpenAI style: litellm counts its tokens with the bundled
        # tokenizer (another provider's could make it fetch one).
        options["mock_response"] = "warm"
        response = await litellm.acompletion(model=WARM_UP_MODEL, messages=messages, **options)
        async for _ in response:
            pass
        return
    # The OpenAI SDK's own HTTP library (a fork of httpx it depends on), mocked in process.
    import httpx2
    import openai

    def answer(request: httpx2.Request) -> httpx2.Response:
        DRY_CALLS[0] += 1
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_DRY_SSE)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        client = openai.AsyncOpenAI(
            api_key="warm-up", base_url="http://warm-up.invalid/v1", http_client=http
        )
        response = await litellm.acompletion(
            model=model, messages=messages, client=client, api_key="warm-up", **options
        )
        async for _ in response:
            pass


DRY_CALLS = [0]
"""How many streams `_dry_stream` answered in process (read by a test)."""


def _tls_context() -> object:
    """litellm's default TLS context (it keeps it for every client it builds): loading the
    CA bundle costs ~20 ms of CPU, and its HTTP transport's own import."""
    from litellm.llms.custom_httpx import aiohttp_transport, http_handler

    return aiohttp_transport, http_handler.get_ssl_configuration()


def _quietly(run: Callable[[Any], object], coroutine: Any) -> None:
    with contextlib.suppress(Exception):
        run(coroutine)


WARM_UP_MODEL = "openai/warm-up"
"""The model `_dry_stream` names for a provider it cannot answer in process."""
_WARMED: set[str] = set()
"""Model strings whose first-call work `_warm_up` has done in this process."""
