"""The chat WebSocket: raw text in, one typed decoder, exactly one `error` per bad frame.

The first frame is always `snapshot`. Turns run in the app's task group, so a dropped
socket never loses a turn; frames reach every socket of the chat through the hub.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import msgspec
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect, WebSocketException
from litestar.params import FromPath

from backend.core.errors import HarnessError, NotFound
from backend.core.ids import is_valid_id
from backend.core.views import MAX_PAGE, WHOLE, Page
from backend.server.dispatch import offer_error, receive
from backend.server.flood import TokenBucket
from backend.server.hub import ENCODER, Connection
from backend.server.ownership import owned
from backend.server.security import SignInCheck, sign_in_check
from backend.server.services import Services
from backend.server.ws_send import writer
from shared_contracts.chat import ChatView
from shared_contracts.frames import MAX_INBOUND_FRAME_BYTES, Snapshot

log = logging.getLogger("harness.ws")

MESSAGE_TOO_BIG = 1009
SIGNED_OUT = 4401
AnySocket = WebSocket[Any, Any, Any]


def _payload(event: Mapping[str, Any]) -> str | bytes:
    """A received frame's text (or bytes: decoded, and refused, by `receive`)."""
    text = event.get("text")
    if isinstance(text, str):
        return text
    data = event.get("bytes")
    return data if isinstance(data, bytes) else b""


def _too_large(raw: str | bytes) -> bool:
    """Over 64 KiB of UTF-8 (a str is only encoded when it could be: ≤ 4 bytes a char)."""
    if isinstance(raw, bytes) or len(raw) * 4 <= MAX_INBOUND_FRAME_BYTES:
        return len(raw) > MAX_INBOUND_FRAME_BYTES
    return len(raw.encode()) > MAX_INBOUND_FRAME_BYTES


@websocket("/api/chats/{chat_id:str}/ws")
async def chat_socket(socket: AnySocket, chat_id: FromPath[str]) -> None:
    if not is_valid_id(chat_id):
        raise WebSocketException(detail="invalid chat id", code=4400)
    page = snapshot_page(socket.query_params.get("limit"))
    try:  # another learner's chat is refused here, as a missing one, before any store call
        services, chat_id = await owned(socket, "chat", chat_id)
    except NotFound:
        raise WebSocketException(detail="chat not found", code=4404) from None
    # The learner's chat stays decoded while the session is open: its turns read no file.
    async with services.chats.held(chat_id):
        try:
            await services.chats.record(chat_id)  # in memory from here: `live_view` reads it
        except NotFound:
            raise WebSocketException(detail="chat not found", code=4404) from None
        await socket.accept()
        await _session(socket, services, chat_id, page, sign_in_check(socket))


def snapshot_page(limit: str | None) -> Page:
    """`?limit=N`: the snapshot holds the latest N messages (1–`MAX_PAGE`), and `earlier`
    counts the rest; without it, the whole chat. Anything else refuses the handshake."""
    if limit is None:
        return WHOLE
    if not limit.isdigit() or not 1 <= int(limit) <= MAX_PAGE:
        detail = f"limit must be a whole number from 1 to {MAX_PAGE}"
        raise WebSocketException(detail=detail, code=4400)
    return Page(limit=int(limit))


async def _session(
    socket: AnySocket, services: Services, chat_id: str, page: Page, check: SignInCheck | None
) -> None:
    # One step, no await: the snapshot holds every frame sent before it (a running turn's
    # streamed text so far included), the connection every frame after it.
    view = services.chats.live_view(chat_id, page)
    connection = services.hub.connect(chat_id)
    try:
        if view is None:  # not in memory after all: read it (frames meanwhile may repeat)
            view = await services.chats.view(chat_id, page)
        view = await _running_elsewhere(services, chat_id, view)
        await socket.send_text(ENCODER.encode(Snapshot(chat=view)).decode())
        del view  # the session holds its chat (`held`), not this first snapshot of it
        await _serve(socket, services, connection, check)
    except WebSocketDisconnect:
        pass
    finally:
        services.hub.disconnect(connection)


async def _running_elsewhere(services: Services, chat_id: str, view: ChatView) -> ChatView:
    """The view, showing a turn another worker runs as running (its end reaches this
    socket: `turn_finished`, then the chat re-read). One process: as it is, no await."""
    if view.turn_running or not services.coordination.fanout.remote:
        return view
    try:
        elsewhere = await services.coordination.claims.elsewhere(chat_id)
    except HarnessError as exc:  # the snapshot goes out as this worker knows the chat
        log.warning("[chat %s] could not ask whether a turn runs elsewhere: %s", chat_id, exc)
        return view
    return msgspec.structs.replace(view, turn_running=True) if elsewhere else view


async def _serve(
    socket: AnySocket, services: Services, connection: Connection, check: SignInCheck | None
) -> None:
    """Read client frames until the socket closes, while `writer` sends the hub's frames;
    with accounts, a frame after the learner signed out (or the token expired) closes it."""
    bucket = TokenBucket(services.settings.ws_frames_per_second, services.settings.ws_burst)
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer, socket, connection)
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                break
            raw = _payload(event)
            if _too_large(raw):
                await socket.close(code=MESSAGE_TOO_BIG, reason="frame over 64 KiB")
                break
            if not bucket.allow():
                offer_error(connection, "rate_limited", "too many frames; slow down")
                continue
            if check is not None and not await check.holds():
                await socket.close(code=SIGNED_OUT, reason="signed out or expired: sign in")
                break
            await receive(services, connection, raw)
        tg.cancel_scope.cancel()
