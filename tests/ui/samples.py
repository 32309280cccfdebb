"""Sample server frames for UI tests: one (or more) of every ServerFrame variant."""

from __future__ import annotations

from datetime import UTC, datetime

from shared_contracts.chat import ChatView, Message, PendingQuestion, TextPart, ToolPart
from shared_contracts.frames import (
    ErrorFrame,
    GraphUpdated,
    JobFrame,
    Plan,
    Pong,
    Question,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.graph import GraphStats
from shared_contracts.jobs import DemoPage, Job
from shared_contracts.plan import PlanNode, PlanTree
from shared_contracts.questions import PublicChoice, PublicQuestion, Verdict
from shared_contracts.tools import GradedOutput

AT = datetime(2026, 1, 1, tzinfo=UTC)
QUIZ_KEY = "SECRET-KEY-7f3a"
"""A quiz answer key: it must never reach a public state var."""

PLAN = PlanTree(
    goal="Fractions",
    nodes=[
        PlanNode(id="halves", title="Halves", status="done"),
        PlanNode(id="compare", title="Comparing", parent="halves", status="active"),
    ],
    current="compare",
    version=2,
)
MC = PublicQuestion(
    kind="multiple_choice",
    prompt="Which is bigger?",
    options=[PublicChoice(id="a", text="1/2"), PublicChoice(id="b", text="1/3")],
)


def quiz_part(state: str = "input-available", output=None) -> ToolPart:
    """A quiz tool part whose input holds the key, as a leaky server might send it."""
    spec = {"kind": "short_answer", "prompt": "Name the top number", "accepted": [QUIZ_KEY]}
    return ToolPart(
        tool_call_id="call_q1",
        tool_name="quiz",
        state=state,
        input={"question": spec},
        output=output,
    )


def chat_view(**changes) -> ChatView:
    fields = {
        "id": "chat-1",
        "title": "Fractions",
        "created_at": AT,
        "updated_at": AT,
        "model": "offline",
        "offline": True,
        "messages": [
            Message(id="m1", role="user", turn=1, created_at=AT, parts=[TextPart(text="hi")]),
            Message(
                id="m2",
                role="assistant",
                turn=1,
                created_at=AT,
                parts=[TextPart(text="Hello"), quiz_part()],
            ),
        ],
        "plan": PLAN,
        "pending_question": PendingQuestion(tool_call_id="call_mc", tool_name="quiz", question=MC),
    }
    fields.update(changes)
    return ChatView(**fields)


def demo_job(status: str = "done") -> Job:
    result = DemoPage(title="Slider", html="<p>demo</p>") if status == "done" else None
    return Job(
        id="job-1",
        chat_id="chat-1",
        tool_call_id="call_d1",
        kind="demo",
        status=status,
        created_at=AT,
        result=result,
    )


GRADED = GradedOutput(
    answer="numerator",
    verdict=Verdict(correct=False, expected=QUIZ_KEY, feedback="Not quite."),
)

ONE_OF_EACH = [
    Snapshot(chat=chat_view()),
    TurnStarted(turn_id=2),
    TextDelta(message_id="m3", delta="Let us "),
    ToolCall(message_id="m3", part=quiz_part()),
    ToolResult(part=quiz_part("output-available", GRADED)),
    Plan(tree=PLAN),
    Question(tool_call_id="call_mc", question=MC),
    VerdictFrame(tool_call_id="call_mc", correct=True, expected="1/2", feedback="Yes."),
    JobFrame(job=demo_job()),
    TurnFinished(turn_id=2, reason="stop"),
    GraphUpdated(stats=GraphStats(nodes=3), new_nodes=["n1", "n2", "n3"]),
    ErrorFrame(code="busy", message="A turn is already running."),
    Pong(),
]
