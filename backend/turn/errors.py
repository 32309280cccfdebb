"""Errors → `error` frames, once: a turn's failure and a client frame that cannot be
served each become one frame with a typed code and a public message, never a traceback;
the operator's log has the detail. (Their HTTP answers: `backend.server.errors`.)"""

from __future__ import annotations

import logging
from typing import cast, get_args

from backend.core.errors import HarnessError, ModelError
from shared_contracts.frames import ErrorCode, ErrorFrame

turn_log = logging.getLogger("harness.turn")

FRAME_CODES: frozenset[str] = frozenset(get_args(ErrorCode))


def error_frame(exc: HarnessError) -> ErrorFrame:
    """The `error` frame of an error raised on purpose (its code, when a frame has it)."""
    code = cast(ErrorCode, exc.code if exc.code in FRAME_CODES else "internal")
    return ErrorFrame(code=code, message=exc.public_message())


def turn_error_frame(exc: Exception, chat_id: str) -> ErrorFrame:
    """The `error` frame of a turn that failed with `exc` (logged here, once)."""
    if isinstance(exc, ModelError):
        turn_log.warning("[chat %s] model call failed: %s", chat_id, exc)
        return ErrorFrame(code="model_error", message=exc.public_message())
    if isinstance(exc, HarnessError):
        turn_log.warning("[chat %s] turn ended with %s: %s", chat_id, type(exc).__name__, exc)
        return error_frame(exc)
    turn_log.error("[chat %s] turn failed", chat_id, exc_info=exc)
    return ErrorFrame(code="internal", message="the turn failed")
