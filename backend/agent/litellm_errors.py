"""A provider's failure as litellm raised it: whether to retry (and after how long), and
what the learner reads (what happened and what to do, never the provider's raw error)."""

from __future__ import annotations

from typing import Any

_RETRYABLE_NAMES = frozenset({"Timeout", "APIConnectionError", "APITimeoutError"})


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
    except (AttributeError, TypeError):  # headers of a shape litellm's providers vary in
        return None
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None  # an HTTP date needs a clock; fall back to exponential backoff


def short_error(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"
