"""Errors → HTTP, once: every failure is a JSON `ErrorBody`, never a traceback or a path."""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException

from backend.core.errors import Busy, HarnessError, InvalidId, NotFound, StorageError
from shared_contracts.http import ErrorBody

log = logging.getLogger("harness.http")

STATUS = {InvalidId: 400, NotFound: 404, Busy: 409, StorageError: 503}


def _body(status: int, detail: str, code: str) -> Response[ErrorBody]:
    return Response(
        ErrorBody(status_code=status, detail=detail, code=code),
        status_code=status,
        media_type=MediaType.JSON,
    )


def harness_error(_: Request, exc: HarnessError) -> Response[ErrorBody]:
    status = next((s for t, s in STATUS.items() if isinstance(exc, t)), 400)
    if status >= 500:
        log.error("request failed: %s", exc)
    return _body(status, exc.public_message(), exc.code)


def http_error(_: Request, exc: HTTPException) -> Response[ErrorBody]:
    detail = exc.detail if isinstance(exc.detail, str) else "request refused"
    extra = getattr(exc, "extra", None)
    if exc.status_code == 400 and extra:
        detail = f"{detail}: {str(extra)[:300]}"
    return _body(exc.status_code, detail, "http")


def unexpected_error(_: Request, exc: Exception) -> Response[ErrorBody]:
    log.error("unexpected error: %r", exc, exc_info=exc)
    return _body(500, "internal error", "internal")


EXCEPTION_HANDLERS = {
    HarnessError: harness_error,
    HTTPException: http_error,
    Exception: unexpected_error,
}
