"""One session over the real WebSocket (`/api/chats/{id}/ws`), frames per PROTOCOL.md.

The driver opens the chat, sends the learner's opening `user_message`, and reads frames:
the tutor's `text_delta`s are handed to the student when the turn ends (what it read),
a `question` is answered when its turn finishes `awaiting_answer` (an `answer` frame with
the student's `confidence`), a `verdict` goes back to the student, and the session ends
when a turn finishes with `stop` and nothing is asked. Frames are read as plain JSON by
`type`, so a frame type added later is ignored, not an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from websockets.asyncio.client import ClientConnection, connect

TURN_SECONDS = 30.0
MAX_TURNS = 60
BUSY_RETRIES = 50


class Student(Protocol):
    def read(self, text: str) -> None:
        """The tutor's words of one turn."""

    def answer(self, frame: dict[str, Any]) -> tuple[Any, float | None]:
        """(answer, confidence) for a `question` frame."""

    def verdict(self, frame: dict[str, Any]) -> None:
        """A `verdict` frame on the last answer."""


class SessionError(RuntimeError):
    """The session broke (an error frame, a turn that failed, no end in sight)."""


@dataclass
class SessionLog:
    chat_id: str
    questions: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)
    """Each turn's finish reason, in order."""
    frames: dict[str, int] = field(default_factory=dict)
    """How many frames of each type arrived."""


async def run_session(ws_base: str, chat_id: str, opening: str, student: Student) -> SessionLog:
    log = SessionLog(chat_id=chat_id)
    url = f"{ws_base}/api/chats/{chat_id}/ws"
    async with connect(url, compression=None, max_size=None, proxy=None) as ws:
        first = json.loads(await ws.recv())
        if first.get("type") != "snapshot":
            raise SessionError(f"expected a snapshot first, got {first.get('type')!r}")
        sent = {"type": "user_message", "text": opening}
        await ws.send(json.dumps(sent))
        for _ in range(MAX_TURNS):
            answer = await _turn(ws, student, log, sent)
            if answer is None:
                return log
            sent = answer
    raise SessionError(f"chat {chat_id}: no end after {MAX_TURNS} turns")


async def _turn(
    ws: ClientConnection, student: Student, log: SessionLog, sent: dict[str, Any]
) -> dict[str, Any] | None:
    """Read one turn to its end; the answer sent when it asks one, None when it is over.
    A `busy` refusal of what was `sent` (the previous turn not yet released) resends it."""
    text: list[str] = []
    question: dict[str, Any] | None = None
    busy = 0
    with anyio.fail_after(TURN_SECONDS):
        while True:
            frame = json.loads(await ws.recv())
            kind = str(frame.get("type"))
            log.frames[kind] = log.frames.get(kind, 0) + 1
            if kind == "text_delta":
                text.append(str(frame.get("delta", "")))
            elif kind == "question":
                question = frame
                log.questions.append(frame)
            elif kind == "verdict":
                log.verdicts.append(frame)
                student.verdict(frame)
            elif kind == "error" and frame.get("code") == "busy" and busy < BUSY_RETRIES:
                busy += 1
                await anyio.sleep(0.02)
                await ws.send(json.dumps(sent))
            elif kind == "error":
                raise SessionError(f"chat {log.chat_id}: error frame {frame}")
            elif kind == "turn_finished":
                break
    reason = str(frame.get("reason"))
    log.turns.append(reason)
    student.read("".join(text))
    if reason == "awaiting_answer" and question is not None:
        value, confidence = student.answer(question)
        answer: dict[str, Any] = {
            "type": "answer",
            "tool_call_id": question["tool_call_id"],
            "answer": value,
        }
        if confidence is not None:
            answer["confidence"] = confidence
        log.answers.append(answer)
        await ws.send(json.dumps(answer))
        return answer
    if reason == "stop":
        return None
    raise SessionError(f"chat {log.chat_id}: a turn finished with {reason!r}")
