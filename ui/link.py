"""The classroom's WebSocket loop: connect, decode frames, batch, reconnect with backoff.

Framework-free: the Reflex background handler passes `apply`, which folds a batch of
frames (and a connection status) into state and answers whether to keep going.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from shared_contracts.frames import ErrorFrame, ServerFrame, TextDelta
from ui.api import chat_status
from ui.model.room import Connection
from ui.settings import WS_MAX_SIZE, auth_headers, ws_url

log = logging.getLogger("ui.link")

DECODER = msgspec.json.Decoder(ServerFrame)
FLUSH_SECONDS = 0.05
IDLE_TICK_SECONDS = 1.0
BACKOFF_SECONDS = (0.5, 1.0, 2.0, 4.0, 8.0)

Apply = Callable[[list[Any], Connection | None], Awaitable[bool]]
"""Folds frames (and a new connection status, if any) into state; False = stop."""


def decode(raw: str | bytes) -> Any:
    """One server frame, or an error frame describing why it could not be read."""
    try:
        return DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        return ErrorFrame(code="bad_frame", message=f"The tutor sent something unreadable ({exc})")


async def _pump(outbox: asyncio.Queue[bytes], ws: Any) -> None:
    while True:
        frame = await outbox.get()
        await ws.send(frame.decode())


async def _read(ws: Any, apply: Apply, flush_seconds: float, idle_seconds: float) -> bool:
    """Reads until the socket closes (True: reconnect) or `apply` says stop (False).

    A frame that is not a token delta is applied at once (with the deltas before it), on
    its own: a verdict is drawn without waiting for what follows it. A token delta is
    applied at once when the last apply was `flush_seconds` ago or more (a turn's first
    token shows at once), else it waits, with the ones after it, for the rest of that
    interval (the browser redraws at most every `flush_seconds` while text streams)."""
    loop = asyncio.get_running_loop()
    batch: list[Any] = []
    applied_at = -math.inf
    while True:
        due = applied_at + flush_seconds - loop.time()
        timeout = max(0.0, due) if batch else idle_seconds
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout)
        except TimeoutError:
            pass
        else:
            batch.append(decode(raw))
            if isinstance(batch[-1], TextDelta) and loop.time() - applied_at < flush_seconds:
                continue
        keep_going = await apply(batch, None)
        if batch:
            applied_at = loop.time()
        batch = []
        if not keep_going:
            return False


NOT_FOUND = "This session does not exist. Start a new one from your graph."
NOT_ALLOWED = "The API refused this page (check LH_API_TOKEN)."


async def _refusal(
    exc: InvalidStatus, chat_id: str, status_of: Callable[[str], Awaitable[int]]
) -> str | None:
    """A message when the API refused for good (not found, not allowed); None = retry.

    A handshake the server refuses before accepting is answered 403 whatever the reason
    (a missing chat too), so a 401 or 403 asks the HTTP API, which tells them apart."""
    code = exc.response.status_code
    if code == 404:
        return NOT_FOUND
    if code in (401, 403):
        return NOT_FOUND if await status_of(chat_id) == 404 else NOT_ALLOWED
    return None


async def run_link(
    chat_id: str,
    outbox: asyncio.Queue[bytes],
    apply: Apply,
    on_error: Callable[[str], Awaitable[None]],
    connect: Callable[..., Any] = ws_connect,
    flush_seconds: float = FLUSH_SECONDS,
    idle_seconds: float = IDLE_TICK_SECONDS,
    backoff: tuple[float, ...] = BACKOFF_SECONDS,
    status_of: Callable[[str], Awaitable[int]] = chat_status,
) -> None:
    """Holds one classroom socket until `apply` says stop, reconnecting with backoff."""
    failures = 0
    while True:
        if not await apply([], "connecting" if failures == 0 else "reconnecting"):
            return
        try:
            async with connect(
                ws_url(chat_id),
                additional_headers=auth_headers(),
                max_size=WS_MAX_SIZE,
                open_timeout=5,
                proxy=None,
            ) as ws:
                failures = 0
                if not await apply([], "connected"):
                    return
                writer = asyncio.create_task(_pump(outbox, ws))
                try:
                    if not await _read(ws, apply, flush_seconds, idle_seconds):
                        return
                finally:
                    writer.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await writer
        except InvalidStatus as exc:
            message = await _refusal(exc, chat_id, status_of)
            if message is not None:
                await on_error(message)
                await apply([], "closed")
                return
            log.info("[chat %s] ws refused: %s", chat_id, exc)
        except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake, InvalidURI) as exc:
            log.info("[chat %s] ws dropped: %s", chat_id, type(exc).__name__)
        delay = backoff[min(failures, len(backoff) - 1)]
        failures += 1
        if not await apply([], "reconnecting"):
            return
        await asyncio.sleep(delay)
