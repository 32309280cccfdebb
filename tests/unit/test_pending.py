"""What a chat record still owes: graded quizzes, the fold boundary, the open question."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from backend.core.errors import NotFound
from backend.core.pending import (
    find_tool_part,
    foldable_upto,
    graded_quizzes,
    pending_answers,
    pending_question,
    replace_tool_part,
)
from shared_contracts.chat import ChatRecord, Message, Part, TextPart, ToolPart, ToolState
from shared_contracts.questions import PublicChoice, Verdict
from shared_contracts.tools import GradedOutput, ReplyOutput

T0 = datetime(2026, 1, 1, tzinfo=UTC)
QUIZ_INPUT: dict[str, Any] = {
    "question": {
        "kind": "multiple_choice",
        "prompt": "2+2?",
        "options": [{"id": "a", "text": "4"}, {"id": "b", "text": "5"}],
        "correct": "a",
        "explanation": "Count them.",
    },
    "node_id": "sums",
}
ASK_INPUT: dict[str, Any] = {"prompt": "What next?", "suggestions": ["More", "Stop"]}


def graded(answer: str = "a", correct: bool = True) -> GradedOutput:
    return GradedOutput(answer=answer, verdict=Verdict(correct=correct, expected="a) 4"))


def tool(
    call_id: str,
    state: ToolState,
    name: str = "quiz",
    output: Any = None,
    input: dict[str, Any] | None = None,
) -> ToolPart:
    return ToolPart(
        tool_call_id=call_id,
        tool_name=name,
        state=state,
        input=QUIZ_INPUT if input is None else input,
        output=output,
    )


def chat(*messages: list[Part]) -> ChatRecord:
    return ChatRecord(
        id="c1",
        title="t",
        created_at=T0,
        updated_at=T0,
        messages=[
            Message(id=f"m{i}", role="assistant", turn=i, created_at=T0, parts=parts)
            for i, parts in enumerate(messages)
        ],
    )


def test_graded_quizzes_are_collected_in_order_from_start() -> None:
    record = chat(
        [TextPart(text="hi"), tool("q1", "output-available", output=graded())],
        [tool("r1", "output-available", name="research"), tool("q2", "output-error")],
        [tool("q3", "output-available", output=graded("b", correct=False))],
        [tool("a1", "output-available", name="ask_user_question", output=ReplyOutput(answer="x"))],
    )
    assert [p.tool_call_id for p in graded_quizzes(record)] == ["q1", "q3"]
    assert [p.tool_call_id for p in graded_quizzes(record, start=1)] == ["q3"]
    assert graded_quizzes(record, start=4) == []


def test_foldable_upto_stops_at_the_first_open_tool_part() -> None:
    record = chat(
        [tool("q1", "output-available", output=graded())],
        [TextPart(text="thinking")],
        [tool("j1", "input-available", name="research", input={"question": "why?"})],
        [tool("q2", "input-available")],
    )
    assert foldable_upto(record) == 2
    streaming = chat([TextPart(text="a")], [tool("q1", "input-streaming", input={})])
    assert foldable_upto(streaming) == 1


def test_foldable_upto_is_everything_when_nothing_is_open() -> None:
    record = chat([TextPart(text="a")], [tool("q1", "output-available", output=graded())])
    assert foldable_upto(record) == 2
    assert foldable_upto(chat()) == 0


def test_pending_answers_counts_graded_quizzes_after_the_fold() -> None:
    record = chat(
        [tool("q1", "output-available", output=graded())],
        [tool("q2", "output-available", output=graded())],
        [tool("q3", "output-available", output=graded())],
    )
    assert pending_answers(record, 0) == 3
    assert pending_answers(record, 1) == 2
    assert pending_answers(record, 3) == 0


def test_pending_question_is_the_last_open_quiz_as_a_public_view() -> None:
    record = chat(
        [tool("q1", "output-available", output=graded())],
        [tool("q2", "input-available"), tool("j1", "input-available", name="demo", input={})],
    )
    pending = pending_question(record)
    assert pending is not None
    assert pending.tool_call_id == "q2"
    assert pending.tool_name == "quiz"
    assert pending.question.kind == "multiple_choice"
    assert pending.question.node_id == "sums"
    assert pending.question.options == [
        PublicChoice(id="a", text="4"),
        PublicChoice(id="b", text="5"),
    ]
    encoded = msgspec.json.encode(pending).decode()
    assert "correct" not in encoded
    assert "Count them" not in encoded


def test_pending_question_for_ask_user() -> None:
    record = chat([tool("a1", "input-available", name="ask_user_question", input=ASK_INPUT)])
    pending = pending_question(record)
    assert pending is not None
    assert pending.tool_name == "ask_user_question"
    assert pending.question.kind == "ask_user"
    assert [o.id for o in pending.question.options] == ["s1", "s2"]


def test_no_pending_question_when_all_are_answered_or_streaming() -> None:
    record = chat(
        [tool("q1", "output-available", output=graded())],
        [tool("q2", "input-streaming", input={"question": {}})],
    )
    assert pending_question(record) is None
    assert pending_question(chat()) is None


@pytest.mark.parametrize(
    "bad_input",
    [
        {},
        {"question": {"kind": "essay", "prompt": "p"}},
        {**QUIZ_INPUT, "extra": 1},
        {"question": {**QUIZ_INPUT["question"], "options": [{"id": "A!", "text": "x"}] * 2}},
    ],
)
def test_pending_question_that_does_not_decode_is_none(bad_input: dict[str, Any]) -> None:
    assert pending_question(chat([tool("q1", "input-available", input=bad_input)])) is None


def test_find_tool_part() -> None:
    record = chat([TextPart(text="a")], [TextPart(text="b"), tool("q1", "input-available")])
    found = find_tool_part(record, "q1")
    assert found is not None
    assert found[:2] == (1, 1)
    assert found[2].tool_call_id == "q1"
    assert find_tool_part(record, "zz") is None


def test_replace_tool_part_returns_a_new_record() -> None:
    record = chat([TextPart(text="a"), tool("q1", "input-available")], [TextPart(text="b")])
    answered = tool("q1", "output-available", output=graded())
    updated = replace_tool_part(record, "q1", answered)
    assert updated.messages[0].parts == [TextPart(text="a"), answered]
    assert updated.messages[1] == record.messages[1]
    assert record.messages[0].parts[1].state == "input-available"  # type: ignore[union-attr]
    with pytest.raises(NotFound, match="zz"):
        replace_tool_part(record, "zz", answered)
