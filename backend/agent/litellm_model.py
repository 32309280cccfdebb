"""The production `ChatModel`: one streaming litellm call with tools, bounded retries.

litellm is imported when the first `LitellmChatModel` is built (by the composition root,
at start-up), not when this module is: importing it costs ~2 s and ~190 MB, which the CLI,
the core and the offline tutor must not pay, and which a learner's first turn must not
wait for on the event loop.
"""

from __future__ import annotations

import gc
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from types import ModuleType
from typing import Any

import anyio

from backend.agent.litellm_errors import classify, explain, short_error
from backend.agent.litellm_request import to_completion_kwargs
from backend.agent.litellm_stream import StreamAssembler
from backend.agent.litellm_warmup import warm_up
from backend.core.errors import ModelError
from shared_contracts.model_io import (
    ModelEvent,
    ModelRequest,
)

log = logging.getLogger(__name__)
Sleep = Callable[[float], Awaitable[Any]]


class LitellmChatModel:
    """`ChatModel` over litellm (any litellm model string).

    Rules: failures before the first chunk are retried when retryable (exponential backoff,
    `Retry-After` honoured up to `max_backoff`), at most `max_attempts` attempts and only
    while another full attempt still fits in `budget` seconds (so a hung provider keeps a
    learner waiting about one `timeout`, not three), then `ModelError(retryable=True)`; a
    failure after chunks were yielded raises `ModelError` at once (the caller keeps the
    partial text); non-retryable errors raise at once. Tool-call arguments are passed
    through raw. When nothing is registered with litellm (callbacks, cache, budget) the
    stream is closed at litellm's closing usage chunk, skipping the end-of-stream rebuild
    that only its success logging reads.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 3,
        budget: float = 90.0,
        sleep: Sleep = anyio.sleep,
        clock: Callable[[], float] = time.monotonic,
        base_backoff: float = 0.5,
        max_backoff: float = 20.0,
    ) -> None:
        self.name = model
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.budget = budget
        self.sleep = sleep
        self.clock = clock
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self._litellm = _import_litellm(model)  # at start-up: never inside a turn's stream

    def _call_kwargs(self, request: ModelRequest, litellm: ModuleType) -> dict[str, Any]:
        kwargs = to_completion_kwargs(request)
        kwargs.update(model=self.model, stream=True, timeout=self.timeout, max_retries=0)
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key
        try:
            supported = litellm.get_supported_openai_params(model=self.model) or []
        except Exception:
            supported = []
        if "stream_options" in supported:
            kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def _cost(self, litellm: ModuleType, prompt_tokens: int, completion_tokens: int) -> float:
        try:
            p, c = litellm.cost_per_token(
                model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
            return float(p) + float(c)
        except Exception:
            return 0.0  # a model missing from the cost map costs "unknown", reported as 0

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        return min(self.base_backoff * 2.0 ** (attempt - 1), self.max_backoff)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one call: chunks, then exactly one `ModelDone`; `ModelError` on failure."""
        litellm = self._litellm
        kwargs = self._call_kwargs(request, litellm)
        started = self.clock()
        attempt = 0
        while True:
            attempt += 1
            acc = StreamAssembler()
            yielded = False
            try:
                response = await litellm.acompletion(**kwargs)
                stop_at_usage = not _observed(litellm)
                try:
                    async for chunk in response:
                        for event in acc.feed(chunk):
                            yielded = True
                            yield event
                        if stop_at_usage and _usage_sent(response):
                            break
                finally:
                    await _close(response)
            except Exception as exc:  # cancellation is a BaseException and passes through
                retryable, retry_after = classify(exc)
                detail = f"{self.model}: {type(exc).__name__}: {short_error(exc)}"
                public = explain(self.model, exc, mid_stream=yielded)
                if yielded:
                    raise ModelError(
                        f"{detail} (mid-stream)", retryable=retryable, public=public
                    ) from exc
                if not retryable:
                    raise ModelError(detail, retryable=False, public=public) from exc
                backoff = self._backoff(attempt, retry_after)
                out_of_time = self.clock() - started + backoff + self.timeout > self.budget
                if attempt >= self.max_attempts or out_of_time:
                    raise ModelError(
                        f"{detail} (after {attempt} attempts)",
                        retryable=True,
                        retry_after=retry_after,
                        public=public,
                    ) from exc
                await self.sleep(backoff)
                continue
            yield acc.done(self._cost(litellm, acc.prompt_tokens, acc.completion_tokens))
            return


def _import_litellm(model: str) -> ModuleType:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout per error
    warm_up(litellm, model)
    if gc.get_freeze_count() < _FROZEN[0]:
        # litellm's import leaves ~390k long-lived objects that every full collection would
        # walk again (~160 ms here, landing mid-stream as a ~0.3 ms-a-chunk spike): collect
        # once, then park everything alive in the permanent generation. Again only if
        # something unfroze it since (an app that froze its start-up heap has stopped).
        gc.collect()
        gc.freeze()
        _FROZEN[0] = gc.get_freeze_count()
    return litellm


_FROZEN = [sys.maxsize]
"""How many objects were frozen once litellm's import was (`maxsize`: not yet)."""


def _observed(litellm: ModuleType) -> bool:
    """Whether anything registered with litellm consumes its end-of-stream logging:
    callbacks, a response cache or a budget."""
    names = ("callbacks", "success_callback", "_async_success_callback")
    return (
        any(getattr(litellm, n, None) for n in names)
        or getattr(litellm, "cache", None) is not None
        or bool(getattr(litellm, "max_budget", None))
    )


def _usage_sent(response: object) -> bool:
    """Whether litellm's wrapper just yielded its closing usage chunk (with
    `stream_options.include_usage`, the last chunk, built once the provider stream is over).

    Asking it for another chunk rebuilds the whole response from every chunk a second time,
    only to hand it to its success logging: O(chunks), about 30 µs a chunk here.
    """
    return getattr(response, "sent_stream_usage", False) is True


async def _close(response: object) -> None:
    closer = getattr(response, "aclose", None)
    if closer is None:
        return
    try:
        await closer()
    except Exception as exc:  # closing a broken stream must not mask the original outcome
        log.debug("closing a litellm stream failed: %s", exc)
