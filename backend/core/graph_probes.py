"""Probes read from a chat record's tool parts: graded quizzes, plan nodes marked done, and
the teacher's other plan marks (a node re-taught, a node left to revisit).

The merger rebuilds events from these, never from model output. Positions count messages,
as `core.pending` does: messages `[0, folded_at)` are folded into the graph.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from shared_contracts.chat import ChatRecord, Message, ToolPart
from shared_contracts.tools import GradedOutput, ReplyOutput


@dataclass(frozen=True, slots=True)
class GradedQuiz:
    """One answered, graded quiz as the transcript records it."""

    index: int
    message_id: str
    turn: int
    at: datetime
    tool_call_id: str
    question: str
    answer: str
    expected: str
    correct: bool
    confidence: float | None
    node_tag: str | None
    options: tuple[str, ...] = ()
    """A multiple choice's option texts, in order (empty for other kinds)."""


@dataclass(frozen=True, slots=True)
class DoneMark:
    """One successful `plan_mark_done` call."""

    index: int
    message_id: str
    turn: int
    at: datetime
    tool_call_id: str
    node_tag: str
    note: str


PlanMarkKind = Literal["taught", "marked_revisit"]


@dataclass(frozen=True, slots=True)
class PlanMark:
    """One successful `plan_update` that re-teaches a node (`reteach`: answers on it in this
    turn are aided) or leaves it to revisit (`status` "revisit")."""

    index: int
    message_id: str
    turn: int
    at: datetime
    tool_call_id: str
    node_tag: str
    kind: PlanMarkKind


def _question(part: ToolPart) -> dict[str, Any]:
    question = part.input.get("question")
    return question if isinstance(question, dict) else {}


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def answer_text(part: ToolPart) -> str:
    """The learner's answer as words: option text for a multiple choice, else the value."""
    output = part.output
    if not isinstance(output, GradedOutput | ReplyOutput):
        return ""
    if isinstance(output, ReplyOutput):
        return output.answer
    question = _question(part)
    if question.get("kind") == "multiple_choice":
        options = {
            o.get("id"): o.get("text", "")
            for o in question.get("options", [])
            if isinstance(o, dict)
        }
        chosen = output.answer if isinstance(output.answer, list) else [output.answer]
        texts = [str(options.get(c, c)) for c in chosen]
        return ", ".join(texts)
    return output.verdict.given or _fmt(output.answer)


def _option_texts(part: ToolPart) -> tuple[str, ...]:
    question = _question(part)
    if question.get("kind") != "multiple_choice":
        return ()
    options = question.get("options", [])
    return tuple(str(o.get("text", "")) for o in options if isinstance(o, dict))


def question_text(part: ToolPart) -> str:
    """The prompt of a quiz or free-form question."""
    if part.tool_name == "ask_user_question":
        return str(part.input.get("prompt", ""))
    return str(_question(part).get("prompt", ""))


def _tool_parts(
    record: ChatRecord, start: int, upto: int | None
) -> Iterator[tuple[int, Message, ToolPart]]:
    end = len(record.messages) if upto is None else upto
    for index in range(max(start, 0), min(end, len(record.messages))):
        message: Message = record.messages[index]
        for part in message.parts:
            if isinstance(part, ToolPart):
                yield index, message, part


def _plan_calls(
    record: ChatRecord, tool: str, start: int, upto: int | None
) -> Iterator[tuple[int, Message, ToolPart, str]]:
    """Successful calls of the plan tool `tool` naming a node (its `id`), with that id."""
    for index, message, part in _tool_parts(record, start, upto):
        node = part.input.get("id")
        if part.tool_name == tool and part.state == "output-available" and isinstance(node, str):
            yield index, message, part, node


def quiz_probes(record: ChatRecord, start: int = 0, upto: int | None = None) -> list[GradedQuiz]:
    """Graded quizzes in messages `[start, upto)`, in transcript order."""
    out = []
    for index, message, part in _tool_parts(record, start, upto):
        if part.tool_name != "quiz" or part.state != "output-available":
            continue
        if not isinstance(part.output, GradedOutput):
            continue
        tag = part.input.get("node_id")
        out.append(
            GradedQuiz(
                index=index,
                message_id=message.id,
                turn=message.turn,
                at=message.created_at,
                tool_call_id=part.tool_call_id,
                question=question_text(part),
                answer=answer_text(part),
                expected=part.output.verdict.expected,
                correct=part.output.verdict.correct,
                confidence=part.output.confidence,
                node_tag=tag if isinstance(tag, str) else None,
                options=_option_texts(part),
            )
        )
    return out


def done_marks(record: ChatRecord, start: int = 0, upto: int | None = None) -> list[DoneMark]:
    """Successful `plan_mark_done` calls in messages `[start, upto)`."""
    out = []
    for index, message, part, node in _plan_calls(record, "plan_mark_done", start, upto):
        out.append(
            DoneMark(
                index=index,
                message_id=message.id,
                turn=message.turn,
                at=message.created_at,
                tool_call_id=part.tool_call_id,
                node_tag=node,
                note=str(part.input.get("note", "")),
            )
        )
    return out


def plan_marks(record: ChatRecord, start: int = 0, upto: int | None = None) -> list[PlanMark]:
    """Re-teach and revisit marks (successful `plan_update` calls) in messages
    `[start, upto)`, in transcript order; a call that does both gives both."""
    out: list[PlanMark] = []
    for index, message, part, node in _plan_calls(record, "plan_update", start, upto):
        kinds: list[PlanMarkKind] = []
        if part.input.get("reteach") is True:
            kinds.append("taught")
        if part.input.get("status") == "revisit":
            kinds.append("marked_revisit")
        out.extend(
            PlanMark(
                index=index,
                message_id=message.id,
                turn=message.turn,
                at=message.created_at,
                tool_call_id=part.tool_call_id,
                node_tag=node,
                kind=kind,
            )
            for kind in kinds
        )
    return out
