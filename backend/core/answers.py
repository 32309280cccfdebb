"""An answer to the open question, graded (a quiz, against its key) or taken as a reply,
before its turn starts: a wrong-shaped answer or a stale question is the caller's error,
not a turn's."""

from __future__ import annotations

import msgspec

from backend.core.errors import NoPendingQuestion, NotFound
from backend.core.pending import find_tool_part, pending_question
from backend.core.questions import grade
from shared_contracts.chat import ChatRecord, ToolPart
from shared_contracts.frames import Answer
from shared_contracts.tools import GradedOutput, QuizArgs, ReplyOutput


def prepare_answer(record: ChatRecord, frame: Answer) -> ToolPart:
    """The open question's part with the answer as its output; nothing is written yet.

    Raises `NoPendingQuestion` or `GradingError` (an answer of the wrong shape).
    """
    pending = pending_question(record)
    if pending is None or pending.tool_call_id != frame.tool_call_id:
        raise NoPendingQuestion("there is no pending question with that tool_call_id")
    part = find_part(record, frame.tool_call_id)
    if part.tool_name == "quiz":
        args = msgspec.convert(part.input, QuizArgs)
        verdict = grade(args.question, frame.answer)
        output: GradedOutput | ReplyOutput = GradedOutput(
            answer=frame.answer, confidence=frame.confidence, verdict=verdict
        )
    else:
        text = frame.answer if isinstance(frame.answer, str) else str(frame.answer)
        output = ReplyOutput(answer=text, confidence=frame.confidence)
    return msgspec.structs.replace(part, state="output-available", output=output)


def find_part(record: ChatRecord, tool_call_id: str) -> ToolPart:
    """The tool part of `tool_call_id`; `NotFound` when the chat has none."""
    found = find_tool_part(record, tool_call_id)
    if found is None:
        raise NotFound(f"tool call {tool_call_id!r} not found")
    return found[2]
