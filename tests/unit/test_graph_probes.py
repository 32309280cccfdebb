"""Probes read from the chat record, plus the lesson-record builders the graph tests share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from backend.core.evidence_gate import transcript_segments
from backend.core.graph_probes import done_marks, quiz_probes
from backend.core.pending import foldable_upto
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.plan import PlanNode, PlanTree
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput, PlanOutput

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)

PLAN = PlanTree(
    goal="Add fractions",
    nodes=[
        PlanNode(id="n-frac", title="What a fraction is", summary="a/b is a of b equal parts"),
        PlanNode(
            id="n-same",
            title="Same denominators",
            summary="add the numerators and keep the denominator",
            parent="n-frac",
        ),
        PlanNode(
            id="n-diff",
            title="Different denominators",
            summary="rewrite over a common denominator first",
            parent="n-frac",
        ),
    ],
)


def msg(index: int, role: str, turn: int, *parts: Any, mid: str | None = None) -> Message:
    return Message(
        id=mid or f"m{index}",
        role=role,  # type: ignore[arg-type]
        turn=turn,
        created_at=T0 + timedelta(minutes=index),
        parts=[TextPart(text=p) if isinstance(p, str) else p for p in parts],
    )


def quiz(
    call_id: str,
    prompt: str,
    answer: str,
    *,
    correct: bool,
    expected: str,
    node: str | None = None,
    options: dict[str, str] | None = None,
    answered: bool = True,
) -> ToolPart:
    question: dict[str, Any]
    if options:
        question = {
            "kind": "multiple_choice",
            "prompt": prompt,
            "options": [{"id": k, "text": v} for k, v in options.items()],
            "correct": expected,
        }
    else:
        question = {"kind": "short_answer", "prompt": prompt, "accepted": [expected]}
    args: dict[str, Any] = {"question": question}
    if node:
        args["node_id"] = node
    output = GradedOutput(
        answer=answer,
        confidence=0.7,
        verdict=Verdict(correct=correct, expected=expected, given=answer),
    )
    return ToolPart(
        tool_call_id=call_id,
        tool_name="quiz",
        state="output-available" if answered else "input-available",
        input=args,
        output=output if answered else None,
    )


def mark_done(call_id: str, node: str) -> ToolPart:
    return ToolPart(
        tool_call_id=call_id,
        tool_name="plan_mark_done",
        state="output-available",
        input={"id": node, "note": "learner added like fractions"},
        output=PlanOutput(tree=PLAN),
    )


def plan_init(call_id: str = "call_plan") -> ToolPart:
    return ToolPart(
        tool_call_id=call_id,
        tool_name="plan_init",
        state="output-available",
        input={"goal": PLAN.goal, "nodes": []},
        output=PlanOutput(tree=PLAN),
    )


LEARNER_INSIGHT = (
    "Oh I see, I added the bottoms too. The denominator stays the same when they match."
)
TEACHER_RULE = "To add 1/5 + 2/5, add the numerators and keep the denominator."


def lesson_record(chat_id: str = "c1", *, open_question: bool = False) -> ChatRecord:
    """A realistic offline-tutor lesson: plan, four graded quizzes (one wrong, one untagged),
    a learner insight in their own words, a node marked done."""
    messages = [
        msg(0, "user", 1, "I want to learn how to add fractions."),
        msg(
            1,
            "assistant",
            1,
            "Great, here is the plan.",
            plan_init(),
            "A fraction like 3/4 means three of four equal parts.",
            quiz(
                "call_q1",
                "What does the 4 in 3/4 count?",
                "b",
                correct=True,
                expected="b",
                node="n-frac",
                options={"a": "the parts taken", "b": "the equal parts in the whole"},
            ),
        ),
        msg(
            2,
            "assistant",
            2,
            "Right! " + TEACHER_RULE,
            quiz(
                "call_q2",
                "What is 1/5 + 2/5?",
                "3/10",
                correct=False,
                expected="3/5",
                node="n-same",
            ),
        ),
        msg(3, "user", 3, LEARNER_INSIGHT),
        msg(
            4,
            "assistant",
            3,
            "Exactly.",
            quiz(
                "call_q3", "What is 2/7 + 3/7?", "5/7", correct=True, expected="5/7", node="n-same"
            ),
        ),
        msg(
            5,
            "assistant",
            4,
            mark_done("call_done1", "n-same"),
            "Now a harder one.",
            quiz("call_q4", "What is 1/2 + 1/4?", "3/4", correct=True, expected="3/4"),
        ),
    ]
    if open_question:
        messages.append(
            msg(
                6,
                "assistant",
                5,
                quiz(
                    "call_q5",
                    "What is 1/3 + 1/6?",
                    "",
                    correct=False,
                    expected="1/2",
                    node="n-diff",
                    answered=False,
                ),
            )
        )
    return ChatRecord(
        id=chat_id,
        title="Fractions",
        created_at=T0,
        updated_at=T0 + timedelta(minutes=len(messages)),
        messages=messages,
        plan=PLAN,
        turns=messages[-1].turn,
    )


def test_quiz_probes_read_question_answer_and_verdict_from_tool_parts() -> None:
    quizzes = quiz_probes(lesson_record())
    assert [q.tool_call_id for q in quizzes] == ["call_q1", "call_q2", "call_q3", "call_q4"]
    first = quizzes[0]
    assert first.question == "What does the 4 in 3/4 count?"
    assert first.answer == "the equal parts in the whole"  # option text, not the option id
    assert (first.correct, first.node_tag) == (True, "n-frac")
    assert (first.message_id, first.turn) == ("m1", 1)
    assert (quizzes[1].answer, quizzes[1].expected, quizzes[1].correct) == ("3/10", "3/5", False)
    assert quizzes[3].node_tag is None
    assert [q.tool_call_id for q in quiz_probes(lesson_record(), 3, 5)] == ["call_q3"]


def test_unanswered_quiz_is_not_a_probe_and_stops_the_foldable_window() -> None:
    record = lesson_record(open_question=True)
    assert foldable_upto(record) == 6
    assert [q.tool_call_id for q in quiz_probes(record)][-1] == "call_q4"


def test_done_marks_and_answer_segments() -> None:
    record = lesson_record()
    assert [(d.tool_call_id, d.node_tag) for d in done_marks(record)] == [("call_done1", "n-same")]
    segments = transcript_segments(record)
    answers = [s for s in segments if s.speaker == "answer"]
    assert answers[1].text == "Q: What is 1/5 + 2/5?\nA: 3/10"
    learner = [s for s in segments if s.speaker == "learner"]
    assert [s.message_id for s in learner] == ["m0", "m3"]
    # Offsets are into the message's rendered text: segments joined by a blank line.
    m1 = [s for s in segments if s.message_id == "m1"]
    assert m1[1].offset == len(m1[0].text) + 2
