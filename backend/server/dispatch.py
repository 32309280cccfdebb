"""A learner's frame, received: the server's one entry point for client frames (the
WebSocket route, a replay and tests call `receive`). Raw text in, one typed decoder,
exactly one `error` frame for a frame that cannot be served."""

from __future__ import annotations

import msgspec

from backend.core.errors import HarnessError
from backend.server.hub import ENCODER, Connection
from backend.server.services import Services
from backend.turn.errors import error_frame
from shared_contracts.frames import (
    Abort,
    Answer,
    ClientFrame,
    ErrorCode,
    ErrorFrame,
    Ping,
    Pong,
    UserMessage,
)

CLIENT_FRAMES = msgspec.json.Decoder(ClientFrame)


def offer_error(connection: Connection, code: ErrorCode, message: str) -> None:
    """Queue one `error` frame for this socket only."""
    offer_frame(connection, ErrorFrame(code=code, message=message[:500]))


def offer_frame(connection: Connection, frame: ErrorFrame | Pong) -> None:
    connection.offer(ENCODER.encode(frame).decode())


async def receive(
    services: Services, connection: Connection, raw: str | bytes, unit: str = ""
) -> None:
    """Handle one client frame of `connection`'s chat; traced as the frame of `unit` (a
    replay names the recorded one), else of the connection's own learner unit."""
    tracer = services.tracer
    chat_id = connection.chat_id
    await tracer.inbound(chat_id, raw, unit or tracer.learner_unit(chat_id, connection))
    try:
        frame = CLIENT_FRAMES.decode(raw)
    except msgspec.DecodeError as exc:
        offer_error(connection, "bad_frame", str(exc))
        return
    except RecursionError:
        offer_error(connection, "bad_frame", "JSON is nested too deeply")
        return
    try:
        match frame:
            case Ping():
                offer_frame(connection, Pong())
            case UserMessage():
                await services.turns.start_user_message(chat_id, frame)
            case Answer():
                await services.turns.start_answer(chat_id, frame)
            case Abort():
                services.turns.abort(chat_id)
    except HarnessError as exc:
        offer_frame(connection, error_frame(exc))
