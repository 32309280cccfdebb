"""Small builders of valid records for store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.graph import EdgeLine, EventLine, PropositionLine, SessionCheckpoint
from shared_contracts.jobs import Job

T0 = datetime(2026, 1, 1, tzinfo=UTC)
BACKENDS = ["files", "postgresql"]
"""Where the port contracts run: `factory` (conftest.py) is each in turn."""


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def chat(chat_id: str = "chat-1", created: int = 0, messages: int = 0, **kw: object) -> ChatRecord:
    msgs = [
        Message(id=f"m{i}", role="user", turn=i, created_at=at(i), parts=[TextPart(text=f"hi {i}")])
        for i in range(messages)
    ]
    return ChatRecord(
        id=chat_id,
        title=f"title {chat_id}",
        created_at=at(created),
        updated_at=at(created),
        messages=msgs,
        **kw,  # type: ignore[arg-type]
    )


def tool_message(msg_id: str, part: ToolPart) -> Message:
    return Message(id=msg_id, role="assistant", turn=1, created_at=at(1), parts=[part])


def prop(i: int, chat_id: str = "chat-1") -> PropositionLine:
    return PropositionLine(
        id=f"p{i}",
        statement=f"statement number {i} with some words",
        chat_id=chat_id,
        created_at=at(i),
        aliases=[f"alias {i}"],
    )


def edge(i: int) -> EdgeLine:
    return EdgeLine(
        id=f"e{i}",
        from_=f"p{i}",
        to=f"p{i + 1}",
        type="requires",
        chat_id="chat-1",
        created_at=at(i),
    )


def event(i: int) -> EventLine:
    return EventLine(id=f"ev{i}", ref=f"ref-{i}", chat_id="chat-1", kind="taught", at=at(i))


def checkpoint(folded_at: int, chat_id: str = "chat-1") -> SessionCheckpoint:
    return SessionCheckpoint(chat_id=chat_id, folded_at=folded_at, run_id="run-1", at=at(9))


def job(job_id: str = "job-1", status: str = "pending", created: int = 0) -> Job:
    return Job(
        id=job_id,
        chat_id="chat-1",
        tool_call_id="call_1",
        kind="research",
        status=status,
        created_at=at(created),
    )  # type: ignore[arg-type]
