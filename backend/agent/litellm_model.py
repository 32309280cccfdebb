"""The production `ChatModel`: one streaming litellm call with tools, bounded retries.

litellm is imported when the first `LitellmChatModel` is built (by the composition root,
at start-up), not when this module is: importing it costs ~2 s and ~190 MB, which the CLI,
the core and the offline tutor must not pay, and which a learner's first turn must not
wait for on the event loop.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any, TypeGuard, get_args

import anyio

from backend.core.errors import ModelError
from shared_contracts.model_io import (
    FinishReason,
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
    Usage,
)

Sleep = Callable[[float], Awaitable[Any]]
_FINISH_REASONS: frozenset[str] = frozenset(get_args(FinishReason))
_RETRYABLE_NAMES = frozenset({"Timeout", "APIConnectionError", "APITimeoutError"})


def to_openai_messages(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """The transcript in OpenAI chat format (assistant tool calls, `tool` results)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def to_completion_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The request's tools, schema and sampling options as litellm keyword arguments."""
    kwargs: dict[str, Any] = {"messages": to_openai_messages(request.messages)}
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if request.response_schema is not None:
        name = str(request.response_schema.get("title") or f"{request.role}_answer")
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": request.response_schema},
        }
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_tokens is not None:
        kwargs["max_tokens"] = request.max_tokens
    return kwargs


def _field(obj: object, name: str) -> Any:
    """`obj.<name>`, or None when it has none.

    litellm's stream objects are pydantic models keeping most values in
    `__pydantic_extra__`; plain attribute access reaches them through pydantic's slow
    `__getattr__` (about 0.5 µs a read, 5 µs a chunk), so read the two dicts directly.
    """
    values = getattr(obj, "__dict__", None)
    if values is None:
        return getattr(obj, name, None)
    if name in values:
        return values[name]
    extra = getattr(obj, "__pydantic_extra__", None)
    if extra and name in extra:
        return extra[name]
    if _declared(type(obj), name):  # type: ignore[arg-type]  # a class hashes: python/mypy#11470
        return getattr(obj, name, None)  # a property or class attribute
    return None


@lru_cache(maxsize=256)
def _declared(cls: type[object], name: str) -> bool:
    return any(name in vars(k) for k in cls.__mro__)


@dataclass
class _CallAcc:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    """Folds litellm stream chunks into our events and, at the end, one `ModelDone`."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _CallAcc] = field(default_factory=dict)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def feed(self, chunk: object) -> list[ModelEvent]:
        """The events one chunk contributes (text deltas, tool-call fragments)."""
        events: list[ModelEvent] = []
        usage = _field(chunk, "usage")
        if usage is not None:
            self.prompt_tokens = int(_field(usage, "prompt_tokens") or 0)
            self.completion_tokens = int(_field(usage, "completion_tokens") or 0)
        for choice in _field(chunk, "choices") or ():
            delta = _field(choice, "delta")
            if delta is not None:
                content = _field(delta, "content")
                if content:
                    self.text.append(content)
                    events.append(TextChunk(text=content))
                for pos, tc in enumerate(_field(delta, "tool_calls") or ()):
                    events.append(self._feed_call(pos, tc))
            reason = _field(choice, "finish_reason")
            if reason:
                self.finish_reason = reason
        return events

    def _feed_call(self, pos: int, tc: object) -> ToolCallChunk:
        raw_index = _field(tc, "index")
        index = raw_index if isinstance(raw_index, int) else pos
        acc = self.calls.setdefault(index, _CallAcc())
        fn = _field(tc, "function")
        name = (_field(fn, "name") if fn is not None else None) or ""
        args = (_field(fn, "arguments") if fn is not None else None) or ""
        call_id = _field(tc, "id") or ""
        # Some providers repeat id/name on every fragment: keep the first.
        acc.id = acc.id or call_id
        acc.name = acc.name or name
        acc.arguments.append(args)
        return ToolCallChunk(index=index, id=call_id, name=name, arguments=args)

    def done(self, cost_usd: float) -> ModelDone:
        """The assembled message; raw tool arguments pass through undecoded."""
        calls = [
            ModelToolCall(id=a.id, name=a.name, arguments="".join(a.arguments))
            for _, a in sorted(self.calls.items())
        ]
        reason: FinishReason = (
            self.finish_reason if _is_finish_reason(self.finish_reason) else "stop"
        )
        if calls and reason == "stop":
            reason = "tool_calls"  # providers that say "stop" after tool calls (e.g. Ollama)
        message = ModelMessage(role="assistant", content="".join(self.text), tool_calls=calls)
        usage = Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=cost_usd,
        )
        return ModelDone(message=message, finish_reason=reason, usage=usage)


def _is_finish_reason(reason: str | None) -> TypeGuard[FinishReason]:
    return reason in _FINISH_REASONS


def classify(exc: BaseException) -> tuple[bool, float | None]:
    """(retryable, Retry-After seconds) for a provider exception: 408/429/5xx, timeouts and
    connection errors are retryable; other 4xx and unknown errors are not."""
    status = getattr(exc, "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    retryable = bool(names & _RETRYABLE_NAMES) or (
        isinstance(status, int) and (status in (408, 429) or status >= 500)
    )
    return retryable, _retry_after(exc)


def explain(model: str, exc: BaseException, *, mid_stream: bool = False) -> str:
    """What the learner reads when a call to `model` failed with `exc`: what happened and
    what to do, without the provider's raw error (the log keeps that)."""
    who = f"The tutor's model ({model})"
    if mid_stream:
        return f"{who} stopped mid-answer. What arrived is kept; send a message to go on."
    status = getattr(exc, "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"AuthenticationError", "PermissionDeniedError"} or status in (401, 403):
        return f"{who} refused its API key. Check the provider's key (e.g. OPENAI_API_KEY)."
    if "NotFoundError" in names or status == 404:
        return f"{who} was not found at the provider. Check LH_MODEL."
    if "RateLimitError" in names or status == 429:
        return f"{who} is rate-limited right now. Wait a minute, then send your message again."
    if names & {"Timeout", "APITimeoutError"}:
        return f"{who} took too long to answer. Send your message again, or try later."
    if names & _RETRYABLE_NAMES or "connection error" in str(exc).lower():
        return f"{who} could not be reached. Check the network, then send your message again."
    if "ContextWindowExceededError" in names:
        return f"{who} cannot take this much text. Start a new session to go on."
    if isinstance(status, int) and status >= 500:
        return f"{who} failed on the provider's side. Send your message again in a moment."
    return f"{who} could not answer ({type(exc).__name__}). Send your message again."


def _retry_after(exc: BaseException) -> float | None:
    headers: Any = getattr(getattr(exc, "response", None), "headers", None) or getattr(
        exc, "headers", None
    )
    if not headers:
        return None
    try:
        raw = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None  # an HTTP date needs a clock; fall back to exponential backoff


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
        self._litellm = _import_litellm()  # here, at start-up: never inside a turn's stream

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
                detail = f"{self.model}: {type(exc).__name__}: {_short(exc)}"
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


def _import_litellm() -> ModuleType:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout per error
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
    except Exception:
        pass  # closing a broken stream must not mask the original outcome


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"
