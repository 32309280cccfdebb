"""A scripted learner for whole lessons over the real WebSocket (used by several suites)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from websockets.asyncio.client import connect

from shared_contracts.frames import (
    ErrorFrame,
    Question,
    ServerFrame,
    Snapshot,
    TurnFinished,
    VerdictFrame,
)

DECODE = msgspec.json.Decoder(ServerFrame)


@dataclass
class LessonLog:
    raw: list[str] = field(default_factory=list)
    frames: list[ServerFrame] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    verdicts: list[VerdictFrame] = field(default_factory=list)
    errors: list[ErrorFrame] = field(default_factory=list)
    turns: list[TurnFinished] = field(default_factory=list)
    answered_before: dict[str, int] = field(default_factory=dict)
    """tool_call_id → how many raw frames had been received before it was answered."""


def pick_answer(question: Question, wrong_first: set[str]) -> object:
    """A plausible learner: first option / a number / a word; deliberately wrong once."""
    q = question.question
    if q.kind == "multiple_choice":
        ids = [o.id for o in q.options]
        return ids[-1] if question.tool_call_id in wrong_first else ids[0]
    if q.kind == "numeric":
        return "1/2"
    if q.kind == "ask_user":
        return q.options[0].text if q.options else "an everyday example, please"
    return "chlorophyll"


async def take_lesson(
    ws_url: str,
    topic: str,
    *,
    max_turns: int = 40,
    origin: str | None = None,
    turn_seconds: float = 30.0,
    pick: Callable[[Question, LessonLog], object] | None = None,
) -> LessonLog:
    """Connect, ask for `topic`, answer every question, stop when the teacher stops.
    `pick`: the learner's answer to a question (the log so far beside it); by default
    `pick_answer`'s plausible learner, wrong once on the first multiple choice."""
    import anyio

    log = LessonLog()
    wrong_once: set[str] = set()
    async with connect(ws_url, origin=origin, max_size=8 * 1024 * 1024) as ws:
        first = DECODE.decode(await ws.recv())
        assert isinstance(first, Snapshot), first
        await ws.send(json.dumps({"type": "user_message", "text": topic}))
        for _ in range(max_turns):
            finished = None
            with anyio.fail_after(turn_seconds):
                while finished is None:
                    text = await ws.recv()
                    log.raw.append(text)
                    frame = DECODE.decode(text)
                    log.frames.append(frame)
                    match frame:
                        case Question():
                            log.questions.append(frame)
                        case VerdictFrame():
                            log.verdicts.append(frame)
                        case ErrorFrame():
                            log.errors.append(frame)
                        case TurnFinished():
                            log.turns.append(frame)
                            finished = frame
            if finished.reason != "awaiting_answer":
                return log
            question = log.questions[-1]
            if not log.verdicts and question.question.kind == "multiple_choice":
                wrong_once.add(question.tool_call_id)
            answer = pick(question, log) if pick else pick_answer(question, wrong_once)
            log.answered_before[question.tool_call_id] = len(log.raw)
            await ws.send(
                json.dumps(
                    {"type": "answer", "tool_call_id": question.tool_call_id, "answer": answer}
                )
            )
    return log
