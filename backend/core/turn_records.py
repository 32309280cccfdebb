"""What a turn writes into its chat record before the teacher speaks (pure but for the
`Clock` and `IdGen` it draws from, inside the write, as the recorder expects)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from backend.core.answers import find_part
from backend.core.errors import NoPendingQuestion
from backend.core.ports import Clock, IdGen
from backend.core.record_ops import (
    job_notices,
    undelivered_job_parts,
    update_tool_part,
    upsert_message,
)
from shared_contracts.chat import (
    UNTITLED,
    ChatRecord,
    Message,
    NoticePart,
    TextPart,
    ToolPart,
    title_from,
)


def opened(
    record: ChatRecord, text: str | None, clock: Clock, ids: IdGen, notices: list[NoticePart]
) -> ChatRecord:
    """The turn-opening write, all in one: the turn count, the learner's message (`text`,
    when the turn starts with one; the first names an untitled chat) and a notice of the
    job results that arrived since the teacher last spoke (its parts appended to
    `notices`)."""
    turn_id = record.turns + 1
    now = clock.now()
    record = msgspec.structs.replace(record, turns=turn_id, updated_at=now)
    if text is not None:
        said = Message(
            id=ids.new("msg"),
            role="user",
            turn=turn_id,
            created_at=now,
            parts=[TextPart(text=text)],
        )
        untitled = record.title == UNTITLED
        record = upsert_message(record, said, now)
        if untitled:
            record = msgspec.structs.replace(record, title=title_from(text))
    parts = undelivered_job_parts(record)
    if parts:
        message = Message(
            id=ids.new("msg"),
            role="user",
            turn=turn_id,
            created_at=now,
            parts=list(job_notices(parts)),
        )
        record = upsert_message(record, message, now)
        notices.extend(p for p in message.parts if isinstance(p, NoticePart))
    return record


def answered(record: ChatRecord, part: ToolPart, now: datetime) -> ChatRecord:
    """The open question's part with its answer (`part`, see `answers.prepare_answer`);
    `NoPendingQuestion` when it has been answered meanwhile."""
    if find_part(record, part.tool_call_id).state != "input-available":
        raise NoPendingQuestion("that question has already been answered")
    updated = update_tool_part(record, part, now)
    assert updated is not None
    return updated
