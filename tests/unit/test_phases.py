"""Session phases derived from a chat record."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.core.phases import session_phase
from shared_contracts.chat import ChatRecord, Message, Part, TextPart, ToolPart
from shared_contracts.plan import PlanNode, PlanTree

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ASK = ToolPart(
    tool_call_id="a1",
    tool_name="ask_user_question",
    state="input-available",
    input={"prompt": "Ready?"},
)


def plan(*statuses: str) -> PlanTree:
    nodes = [PlanNode(id=f"n{i}", title="t", status=s) for i, s in enumerate(statuses)]  # type: ignore[arg-type]
    return PlanTree(goal="g", nodes=nodes, version=1)


def chat(parts: list[Part] | None, tree: PlanTree | None = None) -> ChatRecord:
    messages = (
        [] if parts is None else [Message(id="m0", role="user", turn=0, created_at=T0, parts=parts)]
    )
    return ChatRecord(
        id="c1", title="t", created_at=T0, updated_at=T0, messages=messages, plan=tree
    )


def test_no_messages_is_new() -> None:
    assert session_phase(chat(None)) == "new"
    assert session_phase(chat(None, plan("pending"))) == "new"


def test_messages_without_a_plan_is_planning() -> None:
    assert session_phase(chat([TextPart(text="teach me")])) == "planning"
    assert session_phase(chat([TextPart(text="hi")], PlanTree(goal="g"))) == "planning"
    # the brief's order: no plan wins over an open question
    assert session_phase(chat([ASK])) == "planning"


def test_an_open_question_is_questioning() -> None:
    assert session_phase(chat([ASK], plan("active", "pending"))) == "questioning"
    assert session_phase(chat([ASK], plan("done"))) == "questioning"


def test_an_undecodable_open_question_does_not_count() -> None:
    broken = ToolPart(tool_call_id="q1", tool_name="quiz", state="input-available", input={})
    assert session_phase(chat([broken], plan("active"))) == "teaching"


def test_all_nodes_done_is_finished() -> None:
    assert session_phase(chat([TextPart(text="x")], plan("done", "done"))) == "finished"


def test_otherwise_teaching() -> None:
    assert session_phase(chat([TextPart(text="x")], plan("done", "active"))) == "teaching"
    answered = ToolPart(tool_call_id="a1", tool_name="ask_user_question", state="output-error")
    assert session_phase(chat([answered], plan("pending"))) == "teaching"
