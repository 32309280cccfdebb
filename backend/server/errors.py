"""Errors → HTTP answers, once: a client reads a typed code and a public message, never a
traceback or a path; the operator's log has the detail. (Errors → `error` frames, once:
`backend.turn.errors`.)"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException

from backend.core.errors import (
    AccountRefused,
    AccountTaken,
    BadCredentials,
    Busy,
    HarnessError,
    InvalidId,
    InvalidMoment,
    MaterialRejected,
    NotFound,
    NotSignedIn,
    StorageError,
    TooManyAttempts,
)
from shared_contracts.http import ErrorBody

log = logging.getLogger("harness.http")

STATUS: dict[type[HarnessError], int] = {
    InvalidId: 400,
    InvalidMoment: 400,
    NotFound: 404,
    Busy: 409,
    StorageError: 503,
    AccountRefused: 400,
    AccountTaken: 409,
    BadCredentials: 401,
    NotSignedIn: 401,
    TooManyAttempts: 429,
}
REJECTED_STATUS = {"too_large": 413, "unsupported_type": 415}
"""A refused upload's status by its reason; any other reason (unreadable, encrypted,
scanned, empty, not what its name says) is 422."""


def _body(
    status: int, detail: str, code: str, headers: Mapping[str, str] | None = None
) -> Response[ErrorBody]:
    return Response(
        ErrorBody(status_code=status, detail=detail, code=code),
        status_code=status,
        media_type=MediaType.JSON,
        headers=dict(headers or {}),
    )


def harness_error(_: Request[Any, Any, Any], exc: HarnessError) -> Response[ErrorBody]:
    if isinstance(exc, MaterialRejected):
        log.info("upload refused (%s): %s", exc.reason, exc)
        return _body(REJECTED_STATUS.get(exc.reason, 422), exc.public_message(), exc.reason)
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 400)
    if status >= 500:
        log.error("request failed: %s", exc)
    return _body(status, exc.public_message(), exc.code, _headers(exc))


def _headers(exc: HarnessError) -> dict[str, str]:
    if isinstance(exc, TooManyAttempts):
        return {"Retry-After": str(exc.retry_after_s)}
    if isinstance(exc, BadCredentials | NotSignedIn):
        return {"WWW-Authenticate": "Bearer"}
    return {}


def http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[ErrorBody]:
    """Litestar's own refusals, with the headers they carry (a 405's `Allow`, RFC 9110)."""
    detail = exc.detail or "request refused"
    extra = getattr(exc, "extra", None)
    if exc.status_code == 400 and extra:
        detail = f"{detail}: {str(extra)[:300]}"
    return _body(exc.status_code, detail, "http", exc.headers)


def unexpected_error(_: Request[Any, Any, Any], exc: Exception) -> Response[ErrorBody]:
    log.error("unexpected error: %r", exc, exc_info=exc)
    return _body(500, "internal error", "internal")


ExceptionHandler = Callable[[Request[Any, Any, Any], Any], Response[Any]]
EXCEPTION_HANDLERS: dict[int | type[Exception], ExceptionHandler] = {
    HarnessError: harness_error,
    HTTPException: http_error,
    Exception: unexpected_error,
}
