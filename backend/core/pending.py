"""What a chat record still owes: graded quizzes not yet folded, the open question, tool parts."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
from msgspec.structs import replace

from backend.core.errors import NotFound
from backend.core.questions import ask_user_view, public_view
from shared_contracts.chat import ChatRecord, PendingQuestion, ToolPart
from shared_contracts.tools import AskUserArgs, GradedOutput, QuizArgs

_OPEN_STATES = frozenset({"input-streaming", "input-available"})


def graded_quizzes(record: ChatRecord, start: int = 0) -> list[ToolPart]:
    """Quiz tool parts in `messages[start:]` that hold a graded answer, in transcript order."""
    return [
        part
        for _, _, part in _tool_parts(record, start)
        if part.tool_name == "quiz"
        and part.state == "output-available"
        and isinstance(part.output, GradedOutput)
    ]


def foldable_upto(record: ChatRecord) -> int:
    """How many leading messages extraction may fold: up to the first with an open tool part."""
    for m_index, _, part in _tool_parts(record, 0):
        if part.state in _OPEN_STATES:
            return m_index
    return len(record.messages)


def pending_answers(record: ChatRecord, folded_at: int) -> int:
    """How many graded quizzes lie in `messages[folded_at:]` (answered, not yet folded)."""
    return len(graded_quizzes(record, folded_at))


def pending_question(record: ChatRecord) -> PendingQuestion | None:
    """The last quiz / ask_user_question still awaiting an answer, as its public view."""
    for _, _, part in reversed(list(_tool_parts(record, 0))):
        if part.state != "input-available":
            continue
        try:
            if part.tool_name == "quiz":
                quiz = msgspec.convert(part.input, QuizArgs)
                question = public_view(quiz.question, quiz.node_id)
                return PendingQuestion(
                    tool_call_id=part.tool_call_id, tool_name="quiz", question=question
                )
            if part.tool_name == "ask_user_question":
                ask = msgspec.convert(part.input, AskUserArgs)
                return PendingQuestion(
                    tool_call_id=part.tool_call_id,
                    tool_name="ask_user_question",
                    question=ask_user_view(ask),
                )
        except msgspec.ValidationError:
            return None
    return None


def find_tool_part(record: ChatRecord, tool_call_id: str) -> tuple[int, int, ToolPart] | None:
    """(message index, part index, part) of the tool call `tool_call_id`, or None."""
    for found in _tool_parts(record, 0):
        if found[2].tool_call_id == tool_call_id:
            return found
    return None


def replace_tool_part(record: ChatRecord, tool_call_id: str, part: ToolPart) -> ChatRecord:
    """A new record with tool call `tool_call_id` replaced by `part`; NotFound if absent."""
    found = find_tool_part(record, tool_call_id)
    if found is None:
        raise NotFound(f"no tool call {tool_call_id[:128]!r} in chat {record.id!r}")
    m_index, p_index, _ = found
    message = record.messages[m_index]
    parts = list(message.parts)
    parts[p_index] = part
    messages = list(record.messages)
    messages[m_index] = replace(message, parts=parts)
    return replace(record, messages=messages)


def _tool_parts(record: ChatRecord, start: int) -> Iterator[tuple[int, int, ToolPart]]:
    for m_index in range(max(start, 0), len(record.messages)):
        for p_index, part in enumerate(record.messages[m_index].parts):
            if isinstance(part, ToolPart):
                yield m_index, p_index, part
