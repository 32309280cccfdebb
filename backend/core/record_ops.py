"""Pure edits of a chat record that never lose a concurrent writer's progress.

A turn and a background job may both rewrite the same assistant message; a tool part's
state only moves forward, so merging keeps whichever copy is further along.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from backend.core.pending import find_tool_part, replace_tool_part
from shared_contracts.chat import ChatRecord, Message, NoticePart, Part, ToolPart
from shared_contracts.tools import JOB_TOOLS

STATE_RANK = {"input-streaming": 0, "input-available": 1, "output-available": 2, "output-error": 2}


def _further(ours: ToolPart, stored: ToolPart) -> ToolPart:
    if STATE_RANK[stored.state] > STATE_RANK[ours.state]:
        return stored
    if ours.job_id is None and stored.job_id is not None:
        return msgspec.structs.replace(ours, job_id=stored.job_id)
    return ours


def merge_message(stored: Message, ours: Message) -> Message:
    """`ours` with every tool part replaced by the stored one when that one is further along."""
    by_call = {p.tool_call_id: p for p in stored.parts if isinstance(p, ToolPart)}
    parts: list[Part] = []
    for part in ours.parts:
        if isinstance(part, ToolPart) and part.tool_call_id in by_call:
            parts.append(_further(part, by_call[part.tool_call_id]))
        else:
            parts.append(part)
    return msgspec.structs.replace(ours, parts=parts)


def upsert_message(record: ChatRecord, message: Message, now: datetime) -> ChatRecord:
    """Replace the message with the same id (merging tool parts) or append it."""
    messages = list(record.messages)
    for index, existing in enumerate(messages):
        if existing.id == message.id:
            messages[index] = merge_message(existing, message)
            break
    else:
        messages.append(message)
    return msgspec.structs.replace(record, messages=messages, updated_at=now)


def update_tool_part(record: ChatRecord, part: ToolPart, now: datetime) -> ChatRecord | None:
    """The record with the part of the same call id replaced, or None when there is none."""
    if find_tool_part(record, part.tool_call_id) is None:
        return None
    updated = replace_tool_part(record, part.tool_call_id, part)
    return msgspec.structs.replace(updated, updated_at=now)


def undelivered_job_parts(record: ChatRecord) -> list[ToolPart]:
    """Finished job tool parts the teacher has not yet been told about (no notice names them)."""
    noticed = {
        part.tool_call_id
        for message in record.messages
        for part in message.parts
        if isinstance(part, NoticePart)
    }
    return [
        part
        for message in record.messages
        for part in message.parts
        if isinstance(part, ToolPart)
        and part.tool_name in JOB_TOOLS
        and part.state in ("output-available", "output-error")
        and part.job_id is not None
        and part.tool_call_id not in noticed
    ]


JOB_NOUNS = {"research": "research note", "demo": "demo", "visual": "diagram"}


def job_notices(parts: list[ToolPart]) -> list[NoticePart]:
    """One notice per finished job part, telling the teacher its output has arrived."""
    notices = []
    for part in parts:
        noun = JOB_NOUNS.get(part.tool_name, part.tool_name)
        outcome = "is ready" if part.state == "output-available" else "failed"
        notices.append(
            NoticePart(
                kind="job_delivered",
                text=(
                    f"The {noun} you started ({part.tool_call_id}) {outcome}; its output is"
                    " now in that tool result. Tell the learner about it briefly, then carry on."
                ),
                job_id=part.job_id,
                tool_call_id=part.tool_call_id,
            )
        )
    return notices


def with_part(message: Message, part: Part) -> Message:
    """`message` with `part` added (a tool part replaces the same call's earlier state)."""
    parts = list(message.parts)
    if isinstance(part, ToolPart):
        for index, existing in enumerate(parts):
            if isinstance(existing, ToolPart) and existing.tool_call_id == part.tool_call_id:
                parts[index] = part
                return msgspec.structs.replace(message, parts=parts)
    parts.append(part)
    return msgspec.structs.replace(message, parts=parts)
