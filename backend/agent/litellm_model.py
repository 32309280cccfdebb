"""The production `ChatModel`: one streaming litellm call with tools, bounded retries.

litellm is imported lazily (inside `stream`): importing it costs ~2 s and ~190 MB, which
the CLI, the core and the offline tutor must not pay.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from backend.core.errors import ModelError
from shared_contracts.model_io import (
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
_FINISH_REASONS = frozenset({"stop", "tool_calls", "length", "content_filter"})
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

    def feed(self, chunk: Any) -> list[ModelEvent]:
        """The events one chunk contributes (text deltas, tool-call fragments)."""
        events: list[ModelEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        for choice in getattr(chunk, "choices", None) or []:
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    self.text.append(delta.content)
                    events.append(TextChunk(text=delta.content))
                for pos, tc in enumerate(delta.tool_calls or []):
                    events.append(self._feed_call(pos, tc))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return events

    def _feed_call(self, pos: int, tc: Any) -> ToolCallChunk:
        index = tc.index if isinstance(tc.index, int) else pos
        acc = self.calls.setdefault(index, _CallAcc())
        fn = tc.function
        name = (fn.name if fn is not None else None) or ""
        args = (fn.arguments if fn is not None else None) or ""
        # Some providers repeat id/name on every fragment: keep the first.
        acc.id = acc.id or tc.id or ""
        acc.name = acc.name or name
        acc.arguments.append(args)
        return ToolCallChunk(index=index, id=tc.id or "", name=name, arguments=args)

    def done(self, cost_usd: float) -> ModelDone:
        """The assembled message; raw tool arguments pass through undecoded."""
        calls = [
            ModelToolCall(id=a.id, name=a.name, arguments="".join(a.arguments))
            for _, a in sorted(self.calls.items())
        ]
        reason = self.finish_reason if self.finish_reason in _FINISH_REASONS else "stop"
        if calls and reason == "stop":
            reason = "tool_calls"  # providers that say "stop" after tool calls (e.g. Ollama)
        message = ModelMessage(role="assistant", content="".join(self.text), tool_calls=calls)
        usage = Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=cost_usd,
        )
        return ModelDone(message=message, finish_reason=reason, usage=usage)  # type: ignore[arg-type]


def classify(exc: BaseException) -> tuple[bool, float | None]:
    """(retryable, Retry-After seconds) for a provider exception: 408/429/5xx, timeouts and
    connection errors are retryable; other 4xx and unknown errors are not."""
    status = getattr(exc, "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    retryable = bool(names & _RETRYABLE_NAMES) or (
        isinstance(status, int) and (status in (408, 429) or status >= 500)
    )
    return retryable, _retry_after(exc)


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
    `Retry-After` honoured up to `max_backoff`), at most `max_attempts` attempts, then
    `ModelError(retryable=True)`; a failure after chunks were yielded raises `ModelError` at
    once (the caller keeps the partial text); non-retryable errors raise at once. Tool-call
    arguments are passed through raw.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 3,
        sleep: Sleep = anyio.sleep,
        base_backoff: float = 0.5,
        max_backoff: float = 20.0,
    ) -> None:
        self.name = model
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.sleep = sleep
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff

    def _call_kwargs(self, request: ModelRequest, litellm: Any) -> dict[str, Any]:
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

    def _cost(self, litellm: Any, prompt_tokens: int, completion_tokens: int) -> float:
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
        return min(self.base_backoff * 2 ** (attempt - 1), self.max_backoff)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one call: chunks, then exactly one `ModelDone`; `ModelError` on failure."""
        litellm = _import_litellm()
        kwargs = self._call_kwargs(request, litellm)
        attempt = 0
        while True:
            attempt += 1
            acc = StreamAssembler()
            yielded = False
            try:
                response = await litellm.acompletion(**kwargs)
                try:
                    async for chunk in response:
                        for event in acc.feed(chunk):
                            yielded = True
                            yield event
                finally:
                    await _close(response)
            except Exception as exc:  # cancellation is a BaseException and passes through
                retryable, retry_after = classify(exc)
                detail = f"{self.model}: {type(exc).__name__}: {_short(exc)}"
                if yielded:
                    raise ModelError(f"{detail} (mid-stream)", retryable=retryable) from exc
                if not retryable:
                    raise ModelError(detail, retryable=False) from exc
                if attempt >= self.max_attempts:
                    raise ModelError(
                        f"{detail} (after {attempt} attempts)",
                        retryable=True,
                        retry_after=retry_after,
                    ) from exc
                await self.sleep(self._backoff(attempt, retry_after))
                continue
            yield acc.done(self._cost(litellm, acc.prompt_tokens, acc.completion_tokens))
            return


def _import_litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout per error
    return litellm


async def _close(response: Any) -> None:
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
