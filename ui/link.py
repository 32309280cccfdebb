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
from dataclasses import dataclass
from typing import Any

import msgspec
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from shared_contracts.frames import ErrorFrame, ServerFrame, TextDelta, TurnStarted
from ui.api import chat_status
from ui.model.room import Connection
from ui.settings import WS_MAX_SIZE, auth_headers, ws_url

log = logging.getLogger("ui.link")

DECODER = msgspec.json.Decoder(ServerFrame)
FLUSH_SECONDS = 0.05
HOLD_SECONDS = 0.1
QUIET_SECONDS = 0.005
IDLE_TICK_SECONDS = 1.0
BACKOFF_SECONDS = (0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True)
class Timing:
    """How long frames wait to be applied together (see `_read`); `idle`: how often
    `apply` is asked, with no frames, whether to keep going."""

    flush: float = FLUSH_SECONDS
    hold: float = HOLD_SECONDS
    quiet: float = QUIET_SECONDS
    idle: float = IDLE_TICK_SECONDS

    def due(self, frame: Any, now: float, applied_at: float) -> float:
        """When a batch holding `frame`, arrived `now`, must be applied at the latest."""
        if isinstance(frame, TextDelta):
            return max(now, applied_at + self.flush)
        if isinstance(frame, TurnStarted):
            return now + self.hold
        return now + self.quiet


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


async def _read(ws: Any, apply: Apply, timing: Timing) -> bool:
    """Reads until the socket closes (True: reconnect) or `apply` says stop (False).

    Frames are applied in batches, each batch one redraw in the browser (≈ 50 ms there on
    a loaded machine, whatever its size), so a frame waits only as long as it can:
    - a token delta: at once when the last apply was `flush` ago or more (a turn's first
      token shows at once), else with the ones after it at the end of that interval;
    - a turn's start (the status line): up to `hold`, so that what follows it (an
      answer's verdict, a reply's first token) is drawn in the same redraw rather than
      queued behind the status line's;
    - anything else (a verdict, a question, a turn's end): `quiet` after it arrived, with
      what the server sent along with it (a verdict and its tool result come together)."""
    loop = asyncio.get_running_loop()
    batch: list[Any] = []
    due = math.inf
    applied_at = -math.inf
    while True:
        if not batch or due > loop.time():
            timeout = due - loop.time() if batch else timing.idle
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout)
            except TimeoutError:
                pass
            except ConnectionClosed:
                if batch and not await apply(batch, None):  # what came before the close
                    return False
                raise
            else:
                frame = decode(raw)
                batch.append(frame)
                due = min(due, timing.due(frame, loop.time(), applied_at))
                continue
        keep_going = await apply(batch, None)
        if batch:
            applied_at = loop.time()
        batch, due = [], math.inf
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
    timing: Timing = Timing(),
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
                    if not await _read(ws, apply, timing):
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
